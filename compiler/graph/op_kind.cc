#include "vacc/graph/op_kind.h"

namespace vacc::graph {

namespace {
struct OpInfo {
  OpKind op;
  const char *name;
  bool onnx;
};
constexpr OpInfo kOps[] = {
#define VACC_X(e, name, onnx) {OpKind::k##e, name, onnx},
    VACC_GRAPH_OPS(VACC_X)
#undef VACC_X
};
}  // namespace

const char *op_name(OpKind op) {
  return kOps[static_cast<int>(op)].name;
}

std::optional<OpKind> op_from_onnx(std::string_view op_type) {
  for (const OpInfo &info : kOps) {
    if (info.onnx && op_type == info.name) return info.op;
  }
  return std::nullopt;
}

std::string supported_onnx_ops() {
  std::string s;
  for (const OpInfo &info : kOps) {
    if (!info.onnx) continue;
    if (!s.empty()) s += ", ";
    s += info.name;
  }
  return s;
}

}  // namespace vacc::graph
