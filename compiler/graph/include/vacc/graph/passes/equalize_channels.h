// Cross-layer equalization of channels (Nagel et al. 2019, "Data-free quantization through
// weight equalization and bias correction", section 4.1), for vacc's int8: one power-of-two
// scale per activation tensor and one per weight output channel (docs/quantization.md).
//
// A convolution or dense layer's output channel c that reaches only other convolutions and
// dense layers through channelwise, positively homogeneous operators (Relu, Clip(0, inf), max
// and average pools, Flatten to a dense layer: g(t x) = t g(x) for t > 0, channel by channel)
// can be multiplied by any t_c > 0 without changing the model: the producer's weights and bias
// of channel c times t_c, the readers' weights that read channel c divided by it.
//
// With per-tensor activations, one channel of large values sets the tensor's step and the
// other channels keep few levels; with per-output-channel weights, the readers' rows take the
// factors. This pass balances the two: with a_c the channel's largest magnitude on the
// calibration data (where quantize stores the chain's values) and w_c the largest readers'
// weight on it, t_c = sqrt(w_c / a_c), so both become sqrt(a_c w_c) up to one factor per
// tensor, chosen so that the largest channel keeps its range; t_c is kept within
// [1/kMaxEqualizeFactor, kMaxEqualizeFactor] and channels never seen non-zero keep t_c = 1.
//
// Runs on the float graph before calibrate (which then measures the equalized graph), with
// one float run over the calibration batches for the channel ranges; a graph output and any
// value that reaches anything else (an Add, a concatenation, a ReLU6's bound) stay as they are.
#pragma once

#include <vector>

#include "vacc/graph/graph.h"

namespace vacc::graph {

inline constexpr double kMaxEqualizeFactor = 16;

// Returns the number of layers whose output channels were rescaled.
int equalize_channels(Graph &graph, const std::vector<std::vector<Tensor>> &batches);

}  // namespace vacc::graph
