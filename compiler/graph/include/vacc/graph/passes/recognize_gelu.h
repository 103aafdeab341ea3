// Recognition of GELU as exporters spell it out in primitives (ONNX has Gelu only from opset
// 20), in its two forms:
//   erf:   0.5 * x * (1 + Erf(x / sqrt(2)))                              (x * (1/sqrt(2)) too)
//   tanh:  0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))       (x^3 as Pow(x, 3),
//                                                                         x * (x * x) or (x*x)*x)
// with the half applied last, Mul(Mul(x, t), 0.5), or first, Mul(Mul(x, 0.5), t), and every Add
// and Mul's operands in either order (PyTorch's F.gelu with approximate 'none' and 'tanh', and
// Hugging Face's gelu_new). Each becomes one vacc.Gelu (approximate "none" or "tanh") when the
// constants match to 1e-4 and no intermediate value is read elsewhere or is a graph output.
#pragma once

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Returns the number of GELUs recognized.
int recognize_gelu(Graph &graph);

}  // namespace vacc::graph
