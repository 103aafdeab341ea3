// Batch-norm folding: an inference BatchNormalization whose input is the sole use of a Conv
// with constant weights (and bias) is folded into that Conv:
//   W'[o] = W[o] * a[o],  B'[o] = (B[o] - mean[o]) * a[o] + beta[o],  a = gamma / sqrt(var + eps)
#pragma once

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Returns the number of BatchNormalization nodes folded.
int fold_batch_norm(Graph &graph);

}  // namespace vacc::graph
