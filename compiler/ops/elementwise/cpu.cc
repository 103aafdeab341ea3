// Element-wise operators: Relu, LeakyRelu, Sigmoid, Clip, Add/Sub/Mul/Div with numpy
// broadcasting, Equal, Where, Expand, Cast and CastLike; Identity and Dropout run on the host.
// Semantics follow the graph reference executor: integer Add/Sub/Mul wrap, integer Div truncates
// and yields 0 for a zero divisor.
#include "ops/cpu/common.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

Expr int_divide(Expr a, Expr b) {
  DataType t = a.dtype();
  Expr zero = iconst(t, 0), one = iconst(t, 1);
  Expr bz = tir::eq(b, zero);
  if (t.is_uint()) return tir::select(bz, zero, a / tir::select(bz, one, b));
  Expr overflow = tir::eq(a, lowest(t)) && tir::eq(b, iconst(t, -1));
  Expr d = tir::select(bz || overflow, one, b);
  Expr q = a / d, r = a % d;  // floor division; truncation differs when r != 0, signs differ
  Expr fix = tir::ne(r, zero) && tir::ne(a < zero, d < zero);
  return tir::select(bz, zero, tir::select(fix, q + one, q));
}

}  // namespace

CpuKernel build_elementwise(const Node &node) {
  using graph::OpKind;
  KernelBuilder kb(node);
  const Shape &out_shape = kb.out_value().shape.empty() ? Shape{1} : kb.out_value().shape;
  DataType t = kb.out_type();
  Tensor out;
  switch (node.op) {
    case OpKind::kRelu:
    case OpKind::kLeakyRelu:
    case OpKind::kSigmoid:
    case OpKind::kClip: {
      Tensor x = kb.input(0, out_shape);
      if ((node.op == OpKind::kSigmoid || node.op == OpKind::kLeakyRelu) && !t.is_float()) {
        kb.unsupported(a_type(t) + " input (float only)");
      }
      Expr lo = kb.has_input(1) ? (*kb.input(1, {1}))({0}) : lowest(t);
      Expr hi = kb.has_input(2) ? (*kb.input(2, {1}))({0}) : highest(t);
      float alpha = node.attrs.get_float("alpha", 0.01f);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        std::vector<Expr> idx(i.begin(), i.end());
        Expr v = (*x)(idx);
        Expr zero = iconst(t, 0);
        switch (node.op) {
          case OpKind::kRelu:
            return tir::select(v > zero, v, zero);
          case OpKind::kLeakyRelu:
            return tir::select(v >= zero, v, v * fconst(t, alpha));
          case OpKind::kSigmoid:
            return sigmoid(v);
          default:
            return tir::min(tir::max(v, lo), hi);
        }
      });
      break;
    }
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv: {
      if (t.is_bool()) kb.unsupported("bool operands");
      Tensor a = kb.input(0), b = kb.input(1);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        Expr x = broadcast_read(a, i), y = broadcast_read(b, i);
        switch (node.op) {
          case OpKind::kAdd:
            return x + y;
          case OpKind::kSub:
            return x - y;
          case OpKind::kMul:
            return x * y;
          default:
            return t.is_float() ? x / y : int_divide(x, y);
        }
      });
      break;
    }
    case OpKind::kEqual: {
      Tensor a = kb.input(0), b = kb.input(1);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        return tir::eq(broadcast_read(a, i), broadcast_read(b, i));
      });
      break;
    }
    case OpKind::kWhere: {
      Tensor c = kb.input(0), x = kb.input(1), y = kb.input(2);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        return tir::select(broadcast_read(c, i), broadcast_read(x, i), broadcast_read(y, i));
      });
      break;
    }
    case OpKind::kExpand: {
      Tensor x = kb.input(0);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        return broadcast_read(x, i);
      });
      break;
    }
    case OpKind::kCast:
    case OpKind::kCastLike: {
      // Float to integer truncates and saturates (NaN is 0), as the reference.
      Tensor x = kb.input(0, out_shape);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        return tir::cast(t, (*x)(std::vector<Expr>(i.begin(), i.end())));
      });
      break;
    }
    default:
      VACC_CHECK(false) << "build_elementwise: " << graph::op_name(node.op);
  }
  return kb.finish_elementwise(out);
}

void add_elementwise_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kRelu, build_elementwise});
  lowerings.push_back({graph::OpKind::kLeakyRelu, build_elementwise});
  lowerings.push_back({graph::OpKind::kSigmoid, build_elementwise});
  lowerings.push_back({graph::OpKind::kClip, build_elementwise});
  lowerings.push_back({graph::OpKind::kAdd, build_elementwise});
  lowerings.push_back({graph::OpKind::kSub, build_elementwise});
  lowerings.push_back({graph::OpKind::kMul, build_elementwise});
  lowerings.push_back({graph::OpKind::kDiv, build_elementwise});
  lowerings.push_back({graph::OpKind::kEqual, build_elementwise});
  lowerings.push_back({graph::OpKind::kWhere, build_elementwise});
  lowerings.push_back({graph::OpKind::kExpand, build_elementwise});
  lowerings.push_back({graph::OpKind::kCast, build_elementwise});
  lowerings.push_back({graph::OpKind::kCastLike, build_elementwise});
  // Identity and Dropout (inference) only copy bytes: their reference kernel runs on the host.
  lowerings.push_back({graph::OpKind::kIdentity, nullptr});
  lowerings.push_back({graph::OpKind::kDropout, nullptr});
}

}  // namespace vacc::ops::cpu
