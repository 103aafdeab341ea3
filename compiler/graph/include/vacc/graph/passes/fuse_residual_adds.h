// Residual adds fused into the convolution that produces one of their operands: a vacc.QAdd
// on the accelerator whose operand is an accelerator vacc.QConv's output read by nothing else
// becomes that convolution's epilogue. The convolution takes the add's other operand (the
// skip tensor) as its fourth input and the add's arithmetic as attributes:
//   residual_lshift (its own int8 output's), residual_lshift_skip, residual_rshift,
//   residual_clip_min, residual_clip_max,
// and computes vacc.QAdd(clip(requantized conv), skip) bit for bit, with no pass of its own
// over DRAM. Where both operands qualify, an unstrided convolution, then the one with the
// longer reduction per output takes the add (its GEMMs hide the epilogue's ALU work). A fusion
// the backend cannot run (its policy's legality, asked of the fused node) is not made, nor one
// whose parts measured fewer cycles apart (fusion_policy.h).
#pragma once

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/fusion_policy.h"

namespace vacc::graph {

// Requires partition() to have run and pack_layout() not yet. Returns the number of adds fused.
int fuse_residual_adds(Graph &graph, const FusionPolicy &policy);

}  // namespace vacc::graph
