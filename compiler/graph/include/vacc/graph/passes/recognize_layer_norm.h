// Recognition of the layer normalization that exporters spell out in primitives (PyTorch's
// F.layer_norm at opsets below 17, where ONNX has no LayerNormalization):
//   m = ReduceMean(x, axes)          d = Sub(x, m)          v = ReduceMean(Pow(d, 2), axes)
//   y = Div(d, Sqrt(Add(v, eps)))    [y = Mul(y, scale)]    [y = Add(y, bias)]
// (Mul(d, d) for the square; operands of Add and Mul in either order) becomes one
// LayerNormalization(x, scale, bias) with axis = the first of `axes` and epsilon = eps, when
// `axes` are the trailing axes of x, both means keep their dimensions, eps is a one-element
// constant, scale and bias broadcast over the normalized axes alone, and no intermediate value is
// read elsewhere or is a graph output. Without Mul the scale is a constant of ones. The result
// computes the same values with one pass over the row instead of eight element-wise kernels.
#pragma once

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Returns the number of layer normalizations recognized.
int recognize_layer_norm(Graph &graph);

}  // namespace vacc::graph
