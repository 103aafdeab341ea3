// Fusion of a float MatMul's output stage, for the CPU backend: the bias Add and the GELU that
// PyTorch exports after a Linear layer on a tensor of more than two dimensions (transformers'
// and ConvNeXt's MLPs):
//   MatMul(A, B constant [K, N]) -> Add(·, bias constant of N values)  =>  MatMul(A, B, bias)
//   MatMul ... -> vacc.Gelu                                            =>  activation "gelu"
//                                                                         ("gelu_tanh")
// The fused MatMul adds bias[n] to each output row and applies GELU in the kernel's output
// stage (the matmul family's reference and CPU kernel), so the wide hidden activation is
// written once instead of three times. A MatMul output read by anything else, or an Add or GELU
// output that is a graph output, blocks it. Run on float graphs for the CPU only (after
// block_cpu_layout.h): the GPU's MatMul kernel has no fused stage.
#pragma once

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Returns the number of Adds and GELUs fused.
int fuse_matmul_epilogues(Graph &graph);

}  // namespace vacc::graph
