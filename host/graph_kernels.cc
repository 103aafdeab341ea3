#include "vacc/host/graph_kernels.h"

#include <cstring>

#include "vacc/compile/graph_package.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/support/error.h"

namespace vacc::host {

GraphKernels::GraphKernels(const isa::Package &package)
    : graph_(compile::graph_from_package(package)), nodes_(graph_.nodes()) {}

void GraphKernels::run(size_t index, const std::vector<const uint8_t *> &inputs,
                       const std::vector<uint8_t *> &outputs) {
  const graph::Node &node = *nodes_.at(index);
  std::vector<graph::Tensor> owned(node.inputs.size());
  std::vector<const graph::Tensor *> ins(node.inputs.size(), nullptr);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const graph::Value *v = node.inputs[i];
    if (!v || !inputs[i]) continue;
    if (v->is_constant()) {
      ins[i] = v->constant.get();
      continue;
    }
    owned[i] = graph::Tensor(v->dtype, v->shape);
    std::memcpy(owned[i].raw(), inputs[i], owned[i].nbytes());
    ins[i] = &owned[i];
  }
  std::vector<graph::Tensor> outs;
  try {
    outs = execute(index, node, ins);
  } catch (const Error &e) {
    fail("{}: {}", node.describe(static_cast<int>(index)), e.what());
  }
  for (size_t o = 0; o < node.outputs.size() && o < outs.size(); ++o) {
    if (!node.outputs[o] || !outputs[o]) continue;
    const graph::Value &v = *node.outputs[o];
    VACC_CHECK(outs[o].dtype() == v.dtype && outs[o].shape() == v.shape)
        << node.describe(static_cast<int>(index)) << ": output " << o << " is "
        << graph::dtype_name(outs[o].dtype()) << graph::shape_str(outs[o].shape())
        << ", the package says " << graph::dtype_name(v.dtype) << graph::shape_str(v.shape);
    std::memcpy(outputs[o], outs[o].raw(), outs[o].nbytes());
  }
}

}  // namespace vacc::host
