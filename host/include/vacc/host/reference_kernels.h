// CPU steps on the graph reference executor (graph::execute_node: Eigen for the heavy
// numerics, the bit-exact integer semantics of docs/quantization.md).
#pragma once

#include "vacc/host/graph_kernels.h"

namespace vacc::host {

class ReferenceKernels : public GraphKernels {
 public:
  using GraphKernels::GraphKernels;
  std::string name() const override { return "reference"; }

 protected:
  std::vector<graph::Tensor> execute(size_t index, const graph::Node &node,
                                     const std::vector<const graph::Tensor *> &in) override;
};

}  // namespace vacc::host
