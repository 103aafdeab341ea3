// Bias correction from calibration data (empirical bias correction, Nagel et al. 2019,
// "Data-free quantization through weight equalization and bias correction", section 4.2).
//
// Rounding weights and activations shifts each output channel's mean: E[y_int8] != E[y_float].
// On the int8 graph right after quantize, for every convolution and 2-D dense layer in graph
// order (ConvInteger / MatMulInteger, the Add of its int32 bias, vacc.Requantize), this pass
// runs the int8 graph over the calibration batches (the first kChannelMeanBatches) — with the
// layers before it already corrected — and adds to each channel's int32 bias the difference
// between the float model's channel mean over the same batches (Calibration::channel_mean)
// and the int8 layer's, measured before the
// requantization's rounding and clip, in accumulator steps:
//     bias'[o] += round((E[y_float[o]] - E[(acc + bias')[o] - 2^(s-1)] * 2^-(s+f_y)) * 2^(s+f_y))
// Guarantees: only the bias constants of those layers change (their int32 shape and the
// graph's structure stay), so the graph stays bit-exact to run on the accelerator.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/quantize.h"

namespace vacc::graph {

// Per-channel means of the float model's values, by value name (Calibration::channel_mean).
using ChannelMeans = std::unordered_map<std::string, std::vector<double>>;

// `forms` is quantize's record for `graph`, `float_means` the float model's channel means,
// `batches` the calibration inputs. Returns the number of layers whose bias changed.
int correct_bias(Graph &graph, const Int8Forms &forms, const ChannelMeans &float_means,
                 const std::vector<std::vector<Tensor>> &batches);

}  // namespace vacc::graph
