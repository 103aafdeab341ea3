#include "vacc/graph/passes/calibrate.h"

#include <Eigen/Core>
#include <cmath>

#include "vacc/graph/executor.h"

namespace vacc::graph {

float Calibration::range(const Value *v) const {
  auto it = abs_max.find(v);
  return it == abs_max.end() ? 0.0f : it->second;
}

Calibration calibrate(const Graph &graph, const std::vector<std::vector<Tensor>> &batches) {
  if (batches.empty()) fail("calibration needs at least one batch of sample inputs");
  Calibration calib;
  Executor executor(graph);
  for (const std::vector<Tensor> &batch : batches) {
    executor.run(batch, [&](const Value &v, const Tensor &t) {
      if (t.dtype() != DType::kFloat32 || t.size() == 0) return;
      Eigen::Map<const Eigen::ArrayXf> a(t.data<float>(), t.size());
      float m = a.abs().maxCoeff();
      float &slot = calib.abs_max[&v];
      slot = std::max(slot, m);
    });
    ++calib.samples;
  }
  return calib;
}

}  // namespace vacc::graph
