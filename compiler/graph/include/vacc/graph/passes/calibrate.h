// Calibration for int8 quantization: runs the float graph on sample inputs with the
// reference executor and records, for every value, the largest magnitude it took.
#pragma once

#include <unordered_map>
#include <vector>

#include "vacc/graph/graph.h"

namespace vacc::graph {

struct Calibration {
  std::unordered_map<const Value *, float> abs_max;
  int samples = 0;                    // number of input batches seen
  float range(const Value *v) const;  // 0 when never seen
};

// `batches` holds one input list per run (each as Executor::run takes it). Throws
// vacc::Error when there is no batch or a batch does not fit the graph's inputs.
Calibration calibrate(const Graph &graph, const std::vector<std::vector<Tensor>> &batches);

}  // namespace vacc::graph
