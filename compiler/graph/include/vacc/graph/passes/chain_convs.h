// Depth-first chains: an accelerator vacc.QConv whose output only a 1x1 accelerator vacc.QConv
// reads (stride 1, no padding, one group; no fused pool on either, a fused residual add on the
// second only) becomes, with
// it, one vacc.QConvChain (graph/conv_chain.h): the accelerator runs the pair per tile of
// output pixels, the intermediate kept in INP (extensions.store_inp), never in DRAM. Unlike an
// epilogue's fusion a chain does not always pay (each spatial tile reloads the weights its
// scratchpads cannot keep): it is made where the policy's measured cycles say it is faster
// (parts measured and the chain not: apart), or, neither measured, where its cost model
// expects it at least 5 % faster than the pair apart
// (kChainMargin), or everywhere legal with policy.always; never where the backend cannot run
// it (the policy's legality, asked of the chain node).
#pragma once

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/fusion_policy.h"

namespace vacc::graph {

// The modelled cycles of a chain must be below this fraction of its pair's apart: on ResNet-50's
// chains the model's ratios (0.98-1.0) sat above perf's (0.94-0.99); where it has no figure
// (depthwise first convolutions, which it misjudged) only tuned cycles decide.
inline constexpr double kChainMargin = 0.95;

// Requires pack_layout() to have run. Returns the number of chains made.
int chain_convs(Graph &graph, const FusionPolicy &policy);

}  // namespace vacc::graph
