// The operator registry: the families' definitions, indexed by OpKind, built once.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>

#include "families.h"

namespace vacc::graph {

const std::vector<OpDef> &all_op_defs() {
  static const std::vector<OpDef> defs = [] {
    std::vector<OpDef> added;
    ops::add_elementwise_ops(added);
    ops::add_conv_ops(added);
    ops::add_conv_chain_ops(added);
    ops::add_matmul_ops(added);
    ops::add_pool_ops(added);
    ops::add_normalization_ops(added);
    ops::add_shape_ops(added);
    ops::add_quantize_ops(added);
    ops::add_layout_ops(added);
    ops::add_indexing_ops(added);
    ops::add_math_ops(added);
    ops::add_conv_nchwc_ops(added);
    ops::add_reduce_ops(added);
    ops::add_qmatmul_ops(added);
    ops::add_compare_ops(added);
    ops::add_activation_ops(added);
    ops::add_rearrange_ops(added);
    ops::add_resize_ops(added);
    std::vector<OpDef> by_kind(kNumOpKinds);
    std::vector<bool> defined(kNumOpKinds, false);
    for (const OpDef &d : added) {
      const int i = static_cast<int>(d.op);
      VACC_CHECK(!defined[i] && d.name && d.infer) << "operator #" << i << " is ill-defined";
      by_kind[i] = d;
      defined[i] = true;
    }
    for (int i = 0; i < kNumOpKinds; ++i)
      VACC_CHECK(defined[i]) << "operator #" << i << " has no OpDef";
    return by_kind;
  }();
  return defs;
}

const OpDef &op_def(OpKind op) {
  return all_op_defs()[static_cast<int>(op)];
}

const char *op_name(OpKind op) {
  return op_def(op).name;
}

std::optional<OpKind> op_from_onnx(std::string_view op_type) {
  for (const OpDef &d : all_op_defs()) {
    if (d.onnx && op_type == d.name) return d.op;
  }
  return std::nullopt;
}

std::optional<OpKind> op_from_name(std::string_view name) {
  for (const OpDef &d : all_op_defs()) {
    if (name == d.name) return d.op;
  }
  return std::nullopt;
}

std::string supported_onnx_ops() {
  // In alphabetical order, so that a reader finds an operator (OpKind's order is the families').
  std::vector<std::string_view> names;
  for (const OpDef &d : all_op_defs()) {
    if (d.onnx) names.push_back(d.name);
  }
  std::sort(names.begin(), names.end());
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace vacc::graph
