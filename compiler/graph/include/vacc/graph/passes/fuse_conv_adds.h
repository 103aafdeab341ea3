// Residual adds fused into the CPU's blocked convolution before them, for float graphs after
// block_cpu_layout.h:
//   y = vacc.ConvNCHWc(x, w, b); s = Add(y, r)  =>  s = vacc.ConvNCHWc(x, w, b, r)
// The convolution adds r in its output stage, before its activation, so the sum is no pass of
// its own over the tensor; a Relu after the Add then fuses too (fuse_activations.h). Only a
// convolution without an activation whose result the Add alone reads, and that is no graph
// output, takes it; of two such operands, the one computed later.
#pragma once

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Returns the number of adds fused.
int fuse_conv_adds(Graph &graph);

}  // namespace vacc::graph
