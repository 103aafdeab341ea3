// Max pools fused into the convolution that produces their input: an accelerator MaxPool whose
// input is an accelerator vacc.QConv's output read by nothing else becomes that convolution's
// epilogue, so the convolution's output never goes to DRAM unpooled. The convolution takes
// the pool's windows as attributes (pool_kernel_shape, pool_strides: unpadded windows over its
// output grid) and the pool's output as its own. A pool that reads padding (explicit, or
// ceil_mode's overhang) fuses into a convolution whose input is a windowed pack (a folded
// convolution, fold_windows.h): the pack grows the grid by copies of its edge rows and
// columns (replicate_pads), which a max never prefers to the edge itself, and the windows no
// longer need padding. A fusion the backend cannot run (its policy's legality, asked of the fused
// node) is not made, nor one whose parts measured fewer cycles apart (fusion_policy.h).
#pragma once

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/fusion_policy.h"

namespace vacc::graph {

// Requires partition() and fold_windows() to have run and pack_layout() not yet. Returns the
// number of pools fused.
int fuse_pools(Graph &graph, const FusionPolicy &policy);

}  // namespace vacc::graph
