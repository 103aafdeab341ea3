// Fusion of the quantized graph into the operators the accelerator runs as one kernel:
//   ConvInteger(x, w) -> Add(bias) -> Requantize -> [Relu]   =>  vacc.QConv
//   MatMulInteger(x, w) -> Add(bias) -> Requantize -> [Relu] =>  vacc.QDense (w as [M, K])
//   vacc.QAdd -> Relu                                        =>  vacc.QAdd (clip_min 0)
//   Requantize -> Relu                                       =>  Requantize (clip_min 0)
//   any of these -> DequantizeLinear -> Clip(lo, hi) -> QuantizeLinear, one power-of-two
//   scale, zero points 0 (ReLU6 between quantized operators) => clip [Q(lo), Q(hi)]
// A Relu after requantization to int8 is max(0, .) on the clipped value, i.e. the clip's
// lower bound becomes 0; a float Clip between a dequantize and a quantize at the same scale
// is the integer clip to its quantized bounds (quantizing is monotone and exact on the
// dequantized integers): the fused graph computes bit-identical results. Intermediate values
// read by anything else than the next step of the pattern block the fusion.
#pragma once

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Returns the number of fused operators created or extended.
int fuse(Graph &graph);

}  // namespace vacc::graph
