// Comparisons and logic on the CPU: Greater, Less, GreaterOrEqual, LessOrEqual, And, Or and Xor
// with numpy broadcasting, and Not, as the graph reference computes them.
#include "ops/cpu/common.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

using graph::OpKind;

Expr compare(OpKind op, Expr a, Expr b) {
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
      return a && b;
    case OpKind::kOr:
      return a || b;
    case OpKind::kXor:
      return differ(a, b);
    default:
      VACC_CHECK(false) << "compare: " << graph::op_name(op);
      return a;
  }
}

CpuKernel build_compare(const Node &node) {
  KernelBuilder kb(node);
  const Shape out_shape = kb.out_value().shape.empty() ? Shape{1} : kb.out_value().shape;
  Tensor out;
  if (node.op == OpKind::kNot) {
    Tensor x = kb.input(0, out_shape);
    out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
      return tir::logical_not((*x)(std::vector<Expr>(i.begin(), i.end())));
    });
  } else {
    Tensor a = kb.input(0), b = kb.input(1);
    out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
      return compare(node.op, broadcast_read(a, i), broadcast_read(b, i));
    });
  }
  return kb.finish_elementwise(out);
}

}  // namespace

void add_compare_lowerings(std::vector<CpuLowering> &lowerings) {
  for (OpKind op : {OpKind::kGreater, OpKind::kLess, OpKind::kGreaterOrEqual, OpKind::kLessOrEqual,
                    OpKind::kAnd, OpKind::kOr, OpKind::kXor, OpKind::kNot})
    lowerings.push_back({op, build_compare});
}

}  // namespace vacc::ops::cpu
