// int8 quantization with power-of-two scales (docs/quantization.md). Every quantized value
// holds q with real value q * 2^-f (Value::frac_bits = f), symmetric, zero point 0, so that
// requantization needs only what the accelerator's ALU has: int32 accumulation, adding a
// bias, an arithmetic shift right and min/max clipping before the truncating store. The one
// exception (QuantizeOptions::unsigned_activations): a Relu's output that only unpadded
// convolutions and dense layers read holds unsigned levels, real (q + 128) * 2^-f, the -128
// folded into its producer's bias and the readers' +128 * sum(w) into theirs.
//
// Conv and Gemm/MatMul with constant weights become ConvInteger / MatMulInteger (int8 x int8
// -> int32), an int32 Add of the bias (with the rounding constant 2^(s-1) folded in) and a
// vacc.Requantize (shift s, clip to [-128, 127]). Relu, MaxPool, Flatten, Reshape and
// Transpose run on int8 unchanged; an Add of two quantized values becomes vacc.QAdd. Other
// operators stay float behind DequantizeLinear; graph inputs are quantized with
// QuantizeLinear (scale 2^-f). The graph's inputs and outputs keep their float types.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/learn_rounding.h"

namespace vacc::graph {

struct QuantizeOptions {
  // One power-of-two scale per output channel of each weight (symmetric), so that a channel
  // of small weights keeps its precision; requantization then shifts by a per-channel amount
  // (the ALU's SHR with a vector operand). false: one scale per weight tensor.
  bool per_channel_weights = true;
  // The pipeline's correct_bias pass after quantize (passes/correct_bias.h): each layer's
  // int32 bias corrected so that its channels' means match the float model's on the
  // calibration data. Off by default: it raised ResNet-18's and MobileNetV2's output SQNR
  // but lowered GoogLeNet's and flipped the top-1 of one of its four test inputs
  // (docs/quantization.md).
  bool correct_bias = false;
  // The pipeline's align_scales pass between calibrate and quantize (passes/align_scales.h):
  // activations that reach only convolutions and dense layers are rescaled to fill their
  // power-of-two grids.
  bool align_scales = false;
  // The pipeline's equalize_channels pass before calibrate (passes/equalize_channels.h): the
  // output channels of a convolution or dense layer that reaches only other such layers are
  // rescaled so that activation and weight ranges are balanced across channels.
  bool equalize_channels = false;
  // A Relu's or ReLU6's output read only by convolutions without padding and dense layers is
  // stored as unsigned levels (zero point -128): 255 levels over [0, range] instead of 128,
  // at no cost in cycles (the offsets live in the biases).
  bool unsigned_activations = true;
  // Each output channel's weights on the grid its largest magnitude fills (scale max / 127)
  // rather than a power of two: up to one bit finer, and the requantization then multiplies by
  // a per-channel multiplier (the imported QDQ models' form: shift, clip, multiply, shift;
  // four or five ALU cycles more per output tile). Activations keep power-of-two scales.
  bool exact_weight_scales = false;
  // How weights take their int8 levels: kNearest, kHessian (passes/round_weights.h: each
  // layer's rounding errors fed back through its inputs' Hessian on the calibration data) or
  // kLearned (passes/learn_rounding.h: each weight's level below or above learned by descent
  // on the layer's output error, AdaRound's way), the latter within `rounding_seconds` of
  // nominal compute for the whole model.
  enum class Rounding { kNearest, kHessian, kLearned };
  Rounding rounding = Rounding::kNearest;
  double rounding_seconds = 60;
  // Layers (node names, as `vacc quant-report` lists them) left in float on the CPU; a name
  // the graph lacks is a vacc::Error naming it.
  std::unordered_set<std::string> keep_float;
};

// Each float value that quantize gave an int8 form, by the float value's name (the float
// value itself is gone from the graph once nothing reads it): the int8 value holding it, with
// the same shape and real value q * 2^-frac_bits. quant_report compares the two.
using Int8Forms = std::unordered_map<std::string, const Value *>;

// Quantizes `graph` in place using ranges from `calib` (taken on this same graph). Returns
// the number of operators that now compute in integers. With `forms`, fills it with every
// int8 form still in the graph afterwards.
// With `rounding` (learn_rounding.h), the layers whose Hessians it holds round their weights
// with them (learned where it gives them steps), and its counts say what learned rounding did.
int quantize(Graph &graph, const Calibration &calib, const QuantizeOptions &options = {},
             Int8Forms *forms = nullptr, WeightRounding *rounding = nullptr);

// The fraction bits f for a value of magnitude up to `abs_max`: the largest f with
// abs_max * 2^f <= 127 (0 for abs_max == 0), clamped to [-24, 30].
int frac_bits_for(float abs_max);

}  // namespace vacc::graph
