#include "vacc/cli/llvm_kernels.h"

namespace vacc::cli {

std::vector<graph::Tensor> LlvmKernels::execute(size_t index, const graph::Node &node,
                                                const std::vector<const graph::Tensor *> &in) {
  auto &kernel = kernels_[index];
  if (!kernel) kernel = std::make_unique<ops::cpu::NodeKernel>(node, static_cast<int>(index));
  return kernel->run(in);
}

}  // namespace vacc::cli
