// The runtime's CPU kernels built on the compiler's graph IR: the package is turned back into
// a graph once, and each CPU step runs its node on copies of its operands. Subclasses choose
// how a node executes: the graph reference executor (ReferenceKernels) or the LLVM CPU backend
// (LlvmKernels).
#pragma once

#include <string>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/isa/package.h"

namespace vacc::host {

class GraphKernels : public runtime::HostKernels {
 public:
  explicit GraphKernels(const isa::Package &package);
  void run(size_t index, const std::vector<const uint8_t *> &inputs,
           const std::vector<uint8_t *> &outputs) override;
  const graph::Graph &graph() const { return graph_; }

 protected:
  // Runs node `index` on its operands (nullptr for absent ones); one tensor per output.
  virtual std::vector<graph::Tensor> execute(size_t index, const graph::Node &node,
                                             const std::vector<const graph::Tensor *> &in) = 0;

 private:
  graph::Graph graph_;
  std::vector<graph::Node *> nodes_;
};

}  // namespace vacc::host
