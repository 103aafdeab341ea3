// Holds a run of a package to the compiler's own execution of the same graph, layer by layer:
// the package's graph (graph_from_package) runs on the graph reference executor, and every
// step output the runtime produces (GraphExecutor's step observer) must equal the reference's
// bytes. For the int8 model this is the bit-exactness contract of the accelerator
// (docs/quantization.md); a mismatch names the first step that differs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/isa/package.h"

namespace vacc::host {

struct StepMismatch {
  size_t step = 0;
  std::string name, op;
  bool on_accel = false;
  int64_t differing = 0, elements = 0;
  std::string describe() const;  // "step 6 ('conv2', vacc.QConv on the accelerator): 3 of 6272..."
};

class ReferenceCheck {
 public:
  explicit ReferenceCheck(const isa::Package &package);
  // Runs the reference on `inputs` (one per graph input); call before each checked run.
  void expect(const std::vector<graph::Tensor> &inputs);
  // The observer to pass to GraphExecutor::run; records mismatches of that run.
  runtime::GraphExecutor::StepObserver observer();

  const std::vector<StepMismatch> &mismatches() const { return mismatches_; }
  int64_t compared() const { return compared_; }

 private:
  const isa::Package &package_;
  graph::Graph graph_;
  std::vector<graph::Node *> nodes_;
  std::map<const graph::Value *, graph::Tensor> reference_;
  std::vector<StepMismatch> mismatches_;
  int64_t compared_ = 0;
};

}  // namespace vacc::host
