// CPU steps on the LLVM CPU backend: each node's kernel is built (ops/cpu) and JIT-compiled
// by prepare() or the first time its step runs, then reused. Compiled kernels run in place on
// the runtime's arena (no copies of their operands); shape-only operators copy bytes.
#pragma once

#include <map>
#include <memory>

#include "vacc/host/graph_kernels.h"
#include "vacc/ops/cpu/executor.h"

namespace vacc::host {

class LlvmKernels : public GraphKernels {
 public:
  explicit LlvmKernels(const isa::Package &package);
  std::string name() const override { return "llvm"; }
  void prepare() override;
  void run(size_t index, const std::vector<const uint8_t *> &inputs,
           const std::vector<uint8_t *> &outputs) override;

 protected:
  std::vector<graph::Tensor> execute(size_t index, const graph::Node &node,
                                     const std::vector<const graph::Tensor *> &in) override;

 private:
  ops::cpu::NodeKernel &kernel(size_t index, const graph::Node &node);

  std::vector<size_t> cpu_steps_;  // the steps without an accelerator command list
  std::map<size_t, std::unique_ptr<ops::cpu::NodeKernel>> kernels_;
};

}  // namespace vacc::host
