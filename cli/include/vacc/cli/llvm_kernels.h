// CPU steps on the LLVM CPU backend: each node's kernel is built (ops/cpu) and JIT-compiled
// the first time its step runs, then reused.
#pragma once

#include <map>
#include <memory>

#include "vacc/ops/cpu/executor.h"
#include "vacc/cli/graph_kernels.h"

namespace vacc::cli {

class LlvmKernels : public GraphKernels {
 public:
  using GraphKernels::GraphKernels;
  std::string name() const override { return "llvm"; }

 protected:
  std::vector<graph::Tensor> execute(size_t index, const graph::Node &node,
                                     const std::vector<const graph::Tensor *> &in) override;

 private:
  std::map<size_t, std::unique_ptr<ops::cpu::NodeKernel>> kernels_;
};

}  // namespace vacc::cli
