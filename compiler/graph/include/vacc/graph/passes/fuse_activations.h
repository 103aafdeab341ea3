// Fusion of the float graph's activations into the convolution before them, for the CPU:
//   Conv -> Relu             =>  Conv with activation_min 0
//   Conv -> Clip(lo, hi)     =>  Conv with activation_min lo, activation_max hi
//   vacc.ConvNCHWc -> Sigmoid -> Mul(conv, sigmoid)  =>  vacc.ConvNCHWc with activation "silu"
//                               (y * sigmoid(y): EfficientNet's SiLU, as PyTorch exports it)
//   vacc.ConvNCHWc -> HardSigmoid(a, b) -> Mul(conv, it)  =>  activation "hardswish" with
//                               activation_alpha a, activation_beta b (y * clamp(a y + b, 0, 1):
//                               MobileNetV3's HardSwish as PyTorch exports it at opset 13)
//   vacc.ConvNCHWc -> HardSwish  =>  the same with a = 1/6, b = 0.5
// (constant bounds; an absent one is no bound). A fused Conv clamps its output to
// [activation_min, activation_max] (the conv family's reference and CPU kernels), so the
// fused graph computes the same values with one pass over the activation fewer. A Conv
// output read by anything else, or an activation output that is a graph output, blocks it.
// Run on float graphs only (the int8 pipeline fuses into vacc.QConv instead, fuse.h). The CPU's
// blocked convolution (vacc.ConvNCHWc) fuses alike, after its fused residual add when it has
// one (fuse_conv_adds.h): y = act(conv + bias + sum).
#pragma once

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Returns the number of activations fused.
int fuse_activations(Graph &graph);

}  // namespace vacc::graph
