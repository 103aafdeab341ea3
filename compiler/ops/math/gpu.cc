// The math family's GPU kernels: Tanh, Exp and vacc.Gelu (erf or tanh form) as element-wise unary
// kernels (the elementwise family's, one thread per element).
#include "ops/gpu/common.h"

namespace vacc::ops::gpu {
namespace {

std::string tanh_node(const Node &node, GpuNodeKernel *k) {
  return unary_node_kernel(Unary::kTanh, node, k);
}

std::string exp_node(const Node &node, GpuNodeKernel *k) {
  return unary_node_kernel(Unary::kExp, node, k);
}

std::string gelu_node(const Node &node, GpuNodeKernel *k) {
  const bool tanh_form = node.attrs.get_string("approximate", "none") == "tanh";
  return unary_node_kernel(tanh_form ? Unary::kGeluTanh : Unary::kGelu, node, k);
}

}  // namespace

void add_math_node_kernels(std::vector<GpuLowering> &lowerings) {
  lowerings.push_back({OpKind::kTanh, tanh_node});
  lowerings.push_back({OpKind::kExp, exp_node});
  lowerings.push_back({OpKind::kGelu, gelu_node});
}

}  // namespace vacc::ops::gpu
