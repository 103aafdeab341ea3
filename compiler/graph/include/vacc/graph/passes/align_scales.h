// Scale alignment: activations rescaled to fill their power-of-two int8 grids.
//
// vacc's scales are powers of two (docs/quantization.md), so an activation whose range R lies
// between 63.5 * 2^-f and 127 * 2^-f uses only R / (127 * 2^-f) of its int8 codes: on average
// about half a bit is lost. A convolution or dense layer's output that reaches only other
// convolutions or dense layers through positively homogeneous operators (Relu, a constant Clip,
// max and average pools, Flatten, Reshape: g(a x) = a g(x) for a > 0) can be multiplied by any
// a > 0 without changing the model: the producer's weights and bias are multiplied by a (and a
// Clip's bounds), the consumers' weights divided by it. This pass chooses, for every such
// producer in graph order, a in [1, 2) that puts the stored range at the top of its grid,
// a = 127 * 2^-f / R, and applies it; the clip point stays where calibration put it, the grid
// step shrinks by a. The same idea as cross-layer equalization (Nagel et al. 2019), which
// rescales channels between layers; here the whole tensor, for the grid a power-of-two scale has.
//
// Runs on the float graph between calibrate and quantize; `calib` is updated to the rescaled
// values (largest magnitudes, thresholds and channel means times a), as if calibration had run
// on the rescaled graph. Values outside the chains and the graph's outputs do not change.
#pragma once

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/calibrate.h"

namespace vacc::graph {

// Returns the number of producers rescaled.
int align_scales(Graph &graph, Calibration &calib);

}  // namespace vacc::graph
