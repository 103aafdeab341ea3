// Constant folding: every node whose inputs are all constants is evaluated once with the
// reference executor and its outputs become constants. Identity, inference-mode Dropout and
// Pad nodes that pad nothing (constant pads all zero) are bypassed (their output is their
// input). Nodes that become unused are removed.
#pragma once

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Returns the number of nodes folded or bypassed. Guarantees: same graph outputs for every
// input; no node left with only constant inputs.
int fold_constants(Graph &graph);

}  // namespace vacc::graph
