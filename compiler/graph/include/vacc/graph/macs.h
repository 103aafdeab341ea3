// Multiply-accumulates of a GEMM operator (convolutions, dense layers), counted from its
// shapes. On a packed node (pack_layout.h) the count includes the channels padded to the
// GEMM blocks: what the accelerator executes. The model's own count is Node::model_macs,
// recorded by pack_layout before it pads.
#pragma once

#include <cstdint>

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Multiply-accumulates of one run of `node` as its shapes stand (0 for non-GEMM operators).
int64_t count_macs(const Node &node);

}  // namespace vacc::graph
