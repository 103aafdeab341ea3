// vacc.QConvChain: a convolution and the 1x1 convolution that reads its result, fused by
// passes/chain_convs.h so that the accelerator runs them depth first with the intermediate
// kept on chip (lower::ConvChainParams). Inputs [x, w1, b1, w2, b2] and, with a residual add
// fused into the second, its skip; the second convolution's
// attributes as the node's own, the first's under the prefix "first_" (pack_layout's
// out_block_n and out_block_c among them: the intermediate's blocks), the intermediate's shape
// as first_out_shape and whether it is blocked as first_out_blocked. Its parts are
// the two vacc.QConv nodes it stands for, over a temporary intermediate value: its shape
// inference, reference kernel, MAC count and accelerator mapping are theirs.
#pragma once

#include <memory>

#include "vacc/graph/graph.h"

namespace vacc::graph {

struct ConvChainParts {
  Value mid;           // the intermediate, owned here (not by a graph)
  Node first, second;  // vacc.QConv nodes over the chain's values and `mid`
};

// The parts of `chain` (a vacc.QConvChain); they point at its values and must not outlive it.
std::unique_ptr<ConvChainParts> conv_chain_parts(const Node &chain);

// The chain node's attributes for `first` (whose output only `second` reads) and `second`.
Attributes conv_chain_attrs(const Node &first, const Node &second);

}  // namespace vacc::graph
