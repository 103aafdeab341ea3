// Comparisons and logic: Greater, Less, GreaterOrEqual, LessOrEqual (numbers, broadcast, a bool
// result), And, Or, Xor (bools, broadcast) and Not: reference kernels, shape inference and
// OpDefs. Equal lives with Where in the elementwise family.
#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::ops {
namespace {

bool is_logic(OpKind op) {
  return op == OpKind::kAnd || op == OpKind::kOr || op == OpKind::kXor;
}

void infer_compare(Node &n) {
  Value &a = input_of(n, 0, "A"), &b = input_of(n, 1, "B");
  if (is_logic(n.op)) {
    require_dtype(a, "A", DType::kBool);
    require_dtype(b, "B", DType::kBool);
  } else {
    require_dtype(b, "B", a.dtype);
    if (a.dtype == DType::kBool) fail("input '{}' is bool, expected a number", a.name);
  }
  set_out(n, 0, DType::kBool, broadcast_shapes(a.shape, b.shape));
}

bool apply(OpKind op, double a, double b) {
  switch (op) {
    case OpKind::kGreater:
      return a > b;
    case OpKind::kLess:
      return a < b;
    case OpKind::kGreaterOrEqual:
      return a >= b;
    case OpKind::kLessOrEqual:
      return a <= b;
    case OpKind::kAnd:
      return a != 0 && b != 0;
    case OpKind::kOr:
      return a != 0 || b != 0;
    case OpKind::kXor:
      return (a != 0) != (b != 0);
    default:
      VACC_CHECK(false) << "compare: " << op_name(op);
      return false;
  }
}

Outputs compare(const Node &node, const Inputs &in) {
  const Value *out_v = node.outputs[0];
  Tensor out(DType::kBool, out_v->shape);
  const std::vector<int64_t> oa = broadcast_offsets(in[0]->shape(), out_v->shape);
  const std::vector<int64_t> ob = broadcast_offsets(in[1]->shape(), out_v->shape);
  uint8_t *po = out.data<uint8_t>();
  // Compared in the operands' own type: int64 values beyond 2^53 stay exact.
  visit_dtype(in[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *pa = in[0]->data<T>(), *pb = in[1]->data<T>();
    for (int64_t i = 0; i < out.size(); ++i) {
      const T a = pa[oa[i]], b = pb[ob[i]];
      switch (node.op) {
        case OpKind::kGreater:
          po[i] = a > b;
          break;
        case OpKind::kLess:
          po[i] = a < b;
          break;
        case OpKind::kGreaterOrEqual:
          po[i] = a >= b;
          break;
        case OpKind::kLessOrEqual:
          po[i] = a <= b;
          break;
        default:
          po[i] = apply(node.op, static_cast<double>(a), static_cast<double>(b));
      }
    }
  });
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

void infer_not(Node &n) {
  Value &x = input_of(n, 0, "X");
  require_dtype(x, "X", DType::kBool);
  set_out(n, 0, DType::kBool, x.shape);
}

Outputs logical_not(const Node &node, const Inputs &in) {
  Tensor out(DType::kBool, in[0]->shape());
  const uint8_t *px = in[0]->data<uint8_t>();
  uint8_t *po = out.data<uint8_t>();
  for (int64_t i = 0; i < out.size(); ++i) po[i] = px[i] ? 0 : 1;
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

}  // namespace

void add_compare_ops(std::vector<OpDef> &defs) {
  struct Compare {
    OpKind op;
    const char *name;
    int opset_min;
  };
  for (const Compare &c :
       {Compare{OpKind::kGreater, "Greater", 1}, Compare{OpKind::kLess, "Less", 1},
        Compare{OpKind::kGreaterOrEqual, "GreaterOrEqual", 12},
        Compare{OpKind::kLessOrEqual, "LessOrEqual", 12}, Compare{OpKind::kAnd, "And", 1},
        Compare{OpKind::kOr, "Or", 1}, Compare{OpKind::kXor, "Xor", 1}}) {
    // Before opset 7 the comparisons broadcast only with the `broadcast` attribute.
    defs.push_back({.op = c.op,
                    .name = c.name,
                    .onnx = true,
                    .opset_min = std::max(c.opset_min, 7),
                    .infer = infer_compare,
                    .reference = compare});
  }
  defs.push_back({.op = OpKind::kNot,
                  .name = "Not",
                  .onnx = true,
                  .infer = infer_not,
                  .reference = logical_not});
}

}  // namespace vacc::graph::ops
