#include "vacc/host/llvm_kernels.h"

#include "vacc/support/error.h"

namespace vacc::host {

LlvmKernels::LlvmKernels(const isa::Package &package) : GraphKernels(package) {
  for (size_t i = 0; i < package.steps.size(); ++i)
    if (!package.steps[i].commands) cpu_steps_.push_back(i);
}

ops::cpu::NodeKernel &LlvmKernels::kernel(size_t index, const graph::Node &node) {
  auto &k = kernels_[index];
  if (!k) k = std::make_unique<ops::cpu::NodeKernel>(node, static_cast<int>(index));
  return *k;
}

void LlvmKernels::prepare() {
  const std::vector<graph::Node *> nodes = graph().nodes();
  for (size_t i : cpu_steps_) kernel(i, *nodes.at(i));
}

void LlvmKernels::run(size_t index, const std::vector<const uint8_t *> &inputs,
                      const std::vector<uint8_t *> &outputs) {
  auto it = kernels_.find(index);
  if (it != kernels_.end() && it->second->run(inputs, outputs)) return;
  GraphKernels::run(index, inputs, outputs);  // first run, or a host operator
}

std::vector<graph::Tensor> LlvmKernels::execute(size_t index, const graph::Node &node,
                                                const std::vector<const graph::Tensor *> &in) {
  return kernel(index, node).run(in);
}

}  // namespace vacc::host
