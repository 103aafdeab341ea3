#include "vacc/graph/macs.h"

namespace vacc::graph {

namespace {

// Output channels of a conv/dense result: blocked values ([N/bn, C/bc, ..., bn, bc]) hold
// C/bc blocks of bc.
int64_t out_channels(const Value &v) {
  if (v.layout.blocked) return v.shape.at(1) * v.shape.back();
  return v.rank() >= 2 ? v.shape.at(1) : v.shape.at(0);
}

}  // namespace

int64_t count_macs(const Node &node) {
  const Value *out = node.outputs.empty() ? nullptr : node.outputs[0];
  if (!out) return 0;
  const int64_t n_out = num_elements(out->shape);
  switch (node.op) {
    case OpKind::kConv:
    case OpKind::kConvInteger:
    case OpKind::kQConv:
    case OpKind::kQLinearConv:
    case OpKind::kQDense: {
      const Value *w = node.input(node.op == OpKind::kQLinearConv ? 3 : 1);
      if (!w) return 0;
      const int64_t oc = out_channels(*out);
      return oc ? n_out * (num_elements(w->shape) / oc) : 0;
    }
    case OpKind::kGemm: {
      const Value *a = node.input(0);
      const int64_t k = node.attrs.get_int("transA", 0) ? a->shape.at(0) : a->shape.at(1);
      return n_out * k;
    }
    case OpKind::kMatMul:
    case OpKind::kMatMulInteger:
    case OpKind::kQLinearMatMul:
      return node.input(0)->rank() ? n_out * node.input(0)->shape.back() : 0;
    default:
      return 0;
  }
}

}  // namespace vacc::graph
