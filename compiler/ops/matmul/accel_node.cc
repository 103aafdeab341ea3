// vacc.QDense and vacc.QMatMul as the accelerator's dense layer (DenseParams): rows, features,
// groups side by side, and the requantization.
#include <fmt/format.h>

#include "lower/ops/node_mapping.h"
#include "vacc/lower/host_layout.h"

namespace vacc::lower {
namespace {

std::optional<Layer> dense_layer_of(const graph::Node &node, const isa::HwConfig &c,
                                    std::string *why) {
  const bool blocked = node.inputs[0] && node.inputs[0]->layout.blocked;
  const graph::Value *x = node.inputs[0], *y = node.outputs[0];
  const graph::Value *w = node.inputs[1];
  const int rank = blocked ? 4 : 2;
  if (x->rank() != rank || w->rank() != rank || y->rank() != rank)
    return reject(why, "only [N, K] x [M, K] dense layers map to the GEMM core");
  DenseParams p;
  p.groups = node.attrs.get_int("groups", 1);
  const Dims in = dims_of(*x, c.batch, c.block_in);
  const int64_t w_rows = blocked ? w->shape[0] * w->shape[2] : w->shape[0];
  if (p.groups > 1) {
    // The groups' rows lie side by side in the blocked layout only when each group is a
    // whole number of blocks.
    const int64_t n = blocked ? in.n : x->shape[0];
    if (n % (p.groups * c.batch) != 0 || w_rows % (p.groups * c.block_out) != 0)
      return reject(why, fmt::format("each of the {} groups needs rows that are a multiple of "
                                     "gemm.batch and columns a multiple of gemm.block_out",
                                     p.groups));
  }
  p.batch = in.n / p.groups;
  p.in_features = in.c;
  p.out_features = p.groups > 1 ? w_rows / p.groups
                   : blocked    ? w_rows
                                : round_up(w_rows, c.block_out);
  p.requant = requant_of(node, c, blocked, p.out_features);
  return Layer{node.name, p};
}

// vacc.QMatMul's second operand is an activation, packed on the host at run time.
std::optional<std::string> dense_refuses(const graph::Node &node) {
  if (node.op == graph::OpKind::kQDense && !node.inputs[1]->is_constant())
    return std::string("weights are not constant");
  return std::nullopt;
}

}  // namespace

NodeMapping dense_node_mapping() {
  return {{graph::OpKind::kQDense, graph::OpKind::kQMatMul}, dense_layer_of, dense_refuses};
}

}  // namespace vacc::lower
