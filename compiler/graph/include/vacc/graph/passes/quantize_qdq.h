// Pre-quantized ONNX models (the QDQ form ONNX Runtime's quantize_static and PyTorch's export
// write: QuantizeLinear / DequantizeLinear around activations, DequantizeLinear of int8
// weights) run with their own scales and zero points, not recalibrated
// (docs/quantization.md, "Models quantized by their authors").
//
// uint8 activations become int8 holding the same codes minus 128 (zero point minus 128), which
// is exact. Then each Conv, Gemm or MatMul whose input is DequantizeLinear(int8 activation,
// scalar scale and zero point), whose weight is DequantizeLinear(constant int8, zero point 0,
// one scale or one per output channel), with a float or DequantizeLinear'd constant bias (a
// MatMul's following Add of a constant), optionally followed by Relu or a constant Clip, and
// whose result is read only by one QuantizeLinear, becomes ConvInteger / MatMulInteger + an
// int32 Add of the bias (with the input zero point's correction and the rounding folded in)
// + vacc.Requantize with the model's scale ratio sx * sw[c] / sy as integer multipliers and
// shifts (rescale_for) and the output zero point. A convolution that pads an input with a
// non-zero zero point pads it explicitly (int8 Pad of the zero point) first, since the
// accelerator pads with 0. MaxPool, Reshape, Flatten, Transpose, Squeeze, Unsqueeze and
// Identity between a DequantizeLinear and a QuantizeLinear of the same parameters run on the
// int8 codes. Everything else keeps the model's own float form (DequantizeLinear, the float
// operator, QuantizeLinear on the CPU), which computes exactly what ONNX specifies.
#pragma once

#include <cstdint>
#include <vector>

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Whether `graph` holds QuantizeLinear or DequantizeLinear nodes: a model quantized by its
// author.
bool has_qdq(const Graph &graph);

// An int32 accumulator's rescaling by real ratios r[c] > 0 (one per output channel) with the
// ALU's integer operations, as vacc.Requantize applies it:
//   v = (acc + rounding[c]) >> shifts[c]                      (folded into the bias)
//   v = min(max(v, -pre_clip), pre_clip) * multipliers[c] >> post_shift
// shifts[c] brings r1[c] = r[c] * 2^shifts[c] to at least 2^-7 (its rounding moves the result
// by at most half of that, 2^-8 of an output step); multipliers[c] = round(r1[c] * 2^post_shift)
// has 16 significant bits for the layer's largest r1; pre_clip (at most 32737) bounds v where
// the output saturates anyway, so that the product never leaves int32; rounding[c] is half a
// step of the pre-shift plus half an output step in accumulator units. The result differs
// from round(acc * r[c]) only where acc * r[c] lies within 1/64 of an output step of a
// rounding tie (2^-8 from the pre-shift, about as much from the multiplier's 16 bits and the
// rounding constant), and then by one step.
struct Rescale {
  std::vector<int64_t> shifts, multipliers, rounding;
  int64_t pre_clip = 0, post_shift = 0;
};
// Throws vacc::Error when a ratio is not positive and finite or above 2^14 (an output scale
// finer than the accumulator's by that much).
Rescale rescale_for(const std::vector<double> &ratios);

// Rewrites `graph` (imported, not yet folded: weights still behind their DequantizeLinear) as
// described above. Returns the number of operators that now compute in integers.
int quantize_qdq(Graph &graph);

}  // namespace vacc::graph
