// Element-wise operators: Relu, LeakyRelu, Sigmoid, Clip, Add/Sub/Mul/Div with numpy
// broadcasting, BatchNormalization (inference), Equal, Where, Expand, Cast and CastLike. Semantics
// follow the graph reference executor: integer Add/Sub/Mul wrap, integer Div truncates and yields 0
// for a zero divisor.
#include "common.h"
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

// BatchNormalization with training_mode=1: batch statistics per channel (float64 sums, as the
// reference), the normalized output, and the updated running mean and variance.
CpuKernel batch_norm_training(KernelBuilder &kb) {
  const Node &node = kb.node();
  const Shape &xs = kb.in_value(0).shape;
  int64_t N = xs[0], C = xs[1], inner = graph::num_elements(xs) / std::max<int64_t>(N * C, 1);
  DataType t = tir::float32(), f64 = DataType::float_(64);
  Tensor x = kb.input(0, {N, C, inner});
  Tensor scale = kb.input(1), bias = kb.input(2), mean = kb.input(3), var = kb.input(4);
  float eps = node.attrs.get_float("epsilon", 1e-5f);
  float momentum = node.attrs.get_float("momentum", 0.9f);
  double count = static_cast<double>(N * inner);
  auto xv = [&](const auto &r, const auto &c) { return tir::cast(f64, (*x)({r[0], c, r[1]})); };
  Tensor s1 = te::reduce_sum("sum", {C}, {{"n", N}, {"i", inner}},
                             [&](const auto &c, const auto &r) { return xv(r, c[0]); });
  Tensor s2 =
      te::reduce_sum("sq", {C}, {{"n", N}, {"i", inner}},
                     [&](const auto &c, const auto &r) { return xv(r, c[0]) * xv(r, c[0]); });
  Tensor bm = te::compute("batch_mean", {C}, [&](const auto &c) {
    return tir::cast(t, (*s1)({c[0]}) / fconst(f64, count));
  });
  Tensor bv = te::compute("batch_var", {C}, [&](const auto &c) {
    Expr m = (*s1)({c[0]}) / fconst(f64, count);
    return tir::cast(t, (*s2)({c[0]}) / fconst(f64, count) - m * m);
  });
  Tensor y = te::compute("y", {N, C, inner}, [&](const auto &i) {
    Expr c = i[1];
    Expr a = (*scale)({c}) / tir::Call::make(tir::CallOp::kSqrt, {(*bv)({c}) + fconst(t, eps)});
    Expr b = (*bias)({c}) - (*bm)({c}) * a;
    return (*x)({i[0], i[1], i[2]}) * a + b;
  });
  float keep = 1 - momentum;
  Tensor rm = te::compute("running_mean", {C}, [&](const auto &c) {
    return (*mean)({c[0]}) * fconst(t, momentum) + (*bm)({c[0]}) * fconst(t, keep);
  });
  Tensor rv = te::compute("running_var", {C}, [&](const auto &c) {
    return (*var)({c[0]}) * fconst(t, momentum) + (*bv)({c[0]}) * fconst(t, keep);
  });
  std::vector<Tensor> all = {y, rm, rv}, outs;
  for (size_t k = 0; k < node.outputs.size() && k < 3; ++k) {
    if (node.outputs[k]) outs.push_back(all[k]);
  }
  schedule::Schedule s(outs);
  return kb.finish(s, outs);
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
    case OpKind::kBatchNormalization: {
      if (t != tir::float32()) kb.unsupported(a_type(t) + " input (float32 only)");
      if (node.attrs.get_int("training_mode", 0) != 0) return batch_norm_training(kb);
      Tensor x = kb.input(0);
      Tensor scale = kb.input(1), bias = kb.input(2), mean = kb.input(3), var = kb.input(4);
      float eps = node.attrs.get_float("epsilon", 1e-5f);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        std::vector<Expr> idx(i.begin(), i.end());
        Expr c = i[1];
        Expr a =
            (*scale)({c}) / tir::Call::make(tir::CallOp::kSqrt, {(*var)({c}) + fconst(t, eps)});
        Expr b = (*bias)({c}) - (*mean)({c}) * a;
        return (*x)(idx)*a + b;
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
  schedule::Schedule s({out});
  schedule_elementwise(s, out);
  return kb.finish(s, out);
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
  lowerings.push_back({graph::OpKind::kBatchNormalization, build_elementwise});
  lowerings.push_back({graph::OpKind::kEqual, build_elementwise});
  lowerings.push_back({graph::OpKind::kWhere, build_elementwise});
  lowerings.push_back({graph::OpKind::kExpand, build_elementwise});
  lowerings.push_back({graph::OpKind::kCast, build_elementwise});
  lowerings.push_back({graph::OpKind::kCastLike, build_elementwise});
}

}  // namespace vacc::ops::cpu
