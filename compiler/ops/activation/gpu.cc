// The activation family's GPU kernels: Softplus and Softsign as element-wise unary kernels (the
// elementwise family's, one thread per element; both functions as its compute.cc defines them).
#include "ops/gpu/common.h"

namespace vacc::ops::gpu {
namespace {

std::string softplus_node(const Node &node, GpuNodeKernel *k) {
  return unary_node_kernel(Unary::kSoftplus, node, k);
}

std::string softsign_node(const Node &node, GpuNodeKernel *k) {
  return unary_node_kernel(Unary::kSoftsign, node, k);
}

}  // namespace

void add_activation_node_kernels(std::vector<GpuLowering> &lowerings) {
  lowerings.push_back({OpKind::kSoftplus, softplus_node});
  lowerings.push_back({OpKind::kSoftsign, softsign_node});
}

}  // namespace vacc::ops::gpu
