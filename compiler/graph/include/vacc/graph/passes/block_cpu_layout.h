// The CPU backend's layout, chosen once for a whole float graph: channels in blocks of `block`
// (the vector's floats), [N, ceil(C/block), H, W, 1, block] (NCHWc, as ONNX Runtime's NCHWc
// transformer does), so that convolutions keep output channels in the vectors and store them
// contiguously, depthwise convolutions and pooling vectorize over channels, and nothing between
// two convolutions converts layouts. Each operator's OpDef says how it converts (cpu_blocking,
// cpu_blocking_applies in op_registry.h); today's table:
//
//   Conv (float, 2-D, constant weights; one group, depthwise, or groups of whole blocks of
//   inputs and outputs)  ->  vacc.ConvNCHWc
//     reading a blocked input; a plain one as it is when it has fewer channels than a block (a
//     graph's image), else packed once (vacc.PackNCHWnc)
//   MaxPool (no Indices), GlobalAveragePool, and AveragePool where
//   blocked_average_pool_supported, on a blocked input           ->  blocked output
//   Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh ->  blocked like the input
//   Add, Sub, Mul, Div of two blocked values of one shape, or one per channel of the other
//   ([N, C, 1, 1]: a squeeze-excitation's scaling)               ->  blocked output
//   BatchNormalization (inference, constant parameters) on a blocked input
//                                      ->  vacc.ConvNCHWc, depthwise 1x1 (its per-channel affine)
//   Concat of blocked values along the channels, every input but the last a whole number of
//   blocks                                                       ->  blocked output
//
// Any other reader of a blocked value, and the graph outputs, get it unpacked (one
// vacc.UnpackNCHWnc per value, cropping the padded channels). Padded channels hold unspecified
// values that no reader uses. Run on float graphs only, after the other passes that rewrite
// Conv (fuse_activations.h), so that every node keeps its meaning.
#pragma once

#include <cstdint>

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Returns the number of nodes that compute in the blocked layout.
int block_cpu_layout(Graph &graph, int64_t block);

// Whether the CPU's blocked AveragePool kernel computes `node`: 2-D, undilated, no window past
// the padded input (ceil_mode 0) and no padding or padding counted (count_include_pad), so
// that every window divides by its whole size.
bool blocked_average_pool_supported(const Node &node);

}  // namespace vacc::graph
