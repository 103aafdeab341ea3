// Layout packing: the accelerator's operands move to the blocked NCHWnc layout of the
// config's GEMM core. Activations [N, C, H, W] become [N/batch, C/block, H, W, batch, block]
// (block_in for GEMM inputs, block_out for results, element-wise adds and pools), weights
// [O, I, kh, kw] become [O/block_out, I/block_in, kh, kw, block_out, block_in] (one WGT tile
// per (o, i) block, row-major as in isa/README.md), biases and per-channel shifts are
// zero-padded to a multiple of block_out. Channel counts that are not multiples of a block
// are zero-padded. Layout transforms (vacc.PackNCHWnc / vacc.UnpackNCHWnc) are inserted at
// the partition borders: where a CPU value feeds the accelerator, where an accelerator value
// feeds the CPU or is a graph output, and between accelerator ops with different blockings.
#pragma once

#include "vacc/graph/graph.h"
#include "vacc/isa/config.h"

namespace vacc::graph {

// Requires partition() to have run. Returns the number of layout transforms inserted.
int pack_layout(Graph &graph, const isa::HwConfig &config);

}  // namespace vacc::graph
