// The GPU kernels of graph nodes: each operator family (compiler/ops/<family>/gpu*.cc) registers
// the builders that map a node's attributes, types and shapes onto its GPU operators (ops.h),
// indexed here by OpKind as ops/cpu indexes its CPU lowerings. A node the GPU backend has no kernel
// for gets the reason (its caller runs it on the CPU backend).
#include <optional>

#include "common.h"
#include "vacc/support/error.h"

namespace vacc::ops::gpu {
namespace {

bool all_float(const Node &node) {
  for (const graph::Value *v : node.inputs) {
    if (v && v->dtype != graph::DType::kFloat32) return false;
  }
  for (const graph::Value *v : node.outputs) {
    if (v && v->dtype != graph::DType::kFloat32) return false;
  }
  return node.outputs[0] != nullptr;
}

const std::vector<std::optional<GpuLowering>> &lowerings() {
  static const std::vector<std::optional<GpuLowering>> table = [] {
    std::vector<GpuLowering> added;
    add_activation_node_kernels(added);
    add_conv_node_kernels(added);
    add_elementwise_node_kernels(added);
    add_math_node_kernels(added);
    add_matmul_node_kernels(added);
    add_normalization_node_kernels(added);
    add_pool_node_kernels(added);
    std::vector<std::optional<GpuLowering>> by_kind(graph::kNumOpKinds);
    for (const GpuLowering &l : added) {
      VACC_CHECK(!by_kind[static_cast<int>(l.op)])
          << graph::op_name(l.op) << " has two GPU lowerings";
      by_kind[static_cast<int>(l.op)] = l;
    }
    return by_kind;
  }();
  return table;
}

std::string build(const Node &node, GpuNodeKernel *k) {
  const std::optional<GpuLowering> &l = lowerings()[static_cast<int>(node.op)];
  if (!l) return "this operator";
  if (!all_float(node)) return "operands other than float32";
  for (const graph::Value *v : node.inputs)
    if (v && v->layout.blocked) return "blocked (NCHWc) operands";
  return l->build(node, k);
}

}  // namespace

bool build_node_kernel(const graph::Node &node, GpuNodeKernel *out, std::string *why) {
  std::string reason;
  try {
    reason = build(node, out);
  } catch (const Error &e) {
    reason = e.what();
  }
  if (!reason.empty()) {
    if (why)
      *why = fmt::format("{}: the GPU backend does not run {} with {}", node.describe(),
                         graph::op_name(node.op), reason);
    return false;
  }
  return true;
}

}  // namespace vacc::ops::gpu
