#include "vacc/host/reference_check.h"

#include <fmt/format.h>

#include <cstring>

#include "vacc/compile/graph_package.h"
#include "vacc/graph/reference_executor.h"

namespace vacc::host {

std::string StepMismatch::describe() const {
  return fmt::format(
      "step {} ('{}', {} on the {}): {} of {} elements differ from the compiler's "
      "reference execution",
      step, name, op, on_accel ? "accelerator" : "CPU", differing, elements);
}

ReferenceCheck::ReferenceCheck(const isa::Package &package)
    : package_(package), graph_(compile::graph_from_package(package)), nodes_(graph_.nodes()) {}

void ReferenceCheck::expect(const std::vector<graph::Tensor> &inputs) {
  reference_.clear();
  mismatches_.clear();
  compared_ = 0;
  graph::ReferenceExecutor(graph_).run(
      inputs, [&](const graph::Value &v, const graph::Tensor &t) { reference_[&v] = t; });
}

runtime::GraphExecutor::StepObserver ReferenceCheck::observer() {
  return [this](size_t index, const std::vector<const uint8_t *> &outputs) {
    const graph::Node &node = *nodes_.at(index);
    const isa::PackageStep &step = package_.steps.at(index);
    for (size_t o = 0; o < node.outputs.size() && o < outputs.size(); ++o) {
      if (!node.outputs[o] || !outputs[o]) continue;
      auto it = reference_.find(node.outputs[o]);
      if (it == reference_.end()) continue;
      const graph::Tensor &want = it->second;
      const int item = graph::dtype_size(want.dtype());
      int64_t differing = 0;
      for (int64_t e = 0; e < want.size(); ++e)
        differing += std::memcmp(want.raw() + e * item, outputs[o] + e * item, item) != 0;
      ++compared_;
      if (differing)
        mismatches_.push_back(
            {index, step.name, step.op, step.commands.has_value(), differing, want.size()});
    }
  };
}

}  // namespace vacc::host
