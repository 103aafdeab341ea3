// Element-wise math on the CPU: Tanh, Exp, Log, Sqrt, Erf, Reciprocal, Floor, Ceil, Abs, Neg,
// HardSigmoid, HardSwish, vacc.Gelu, Pow, Mod (floored, or truncated with fmod; a zero integer
// divisor gives 0) and the variadic Sum, Mean, Max and Min (broadcast).
// Functions without an LLVM intrinsic are composed: tanh from exp in float64, erf and GELU as
// both backends define them (compute.cc), pow as exp(y log |x|) in float64 with the sign of
// a negative base's integer powers.
#include <cmath>

#include "ops/cpu/common.h"
#include "ops/math/compute.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

using graph::OpKind;

Expr tanh_of(Expr x, DataType t) {
  const DataType f64 = DataType::float_(64);
  Expr v = tir::cast(f64, x);
  Expr e = call(tir::CallOp::kExp, fconst(f64, -2.0) * call(tir::CallOp::kAbs, v));
  Expr r = (fconst(f64, 1.0) - e) / (fconst(f64, 1.0) + e);
  return tir::cast(t, tir::select(v < fconst(f64, 0.0), fconst(f64, 0.0) - r, r));
}

Expr unary_math(const Node &node, Expr x, DataType t) {
  Expr zero = iconst(t, 0);
  switch (node.op) {
    case OpKind::kTanh:
      return tanh_of(x, t);
    case OpKind::kExp:
      return call(tir::CallOp::kExp, x);
    case OpKind::kLog:
      return call(tir::CallOp::kLog, x);
    case OpKind::kSqrt:
      return call(tir::CallOp::kSqrt, x);
    case OpKind::kErf:
      return compute::erf(x);
    case OpKind::kReciprocal:
      return fconst(t, 1.0) / x;
    case OpKind::kFloor:
      return call(tir::CallOp::kFloor, x);
    case OpKind::kCeil:
      return call(tir::CallOp::kCeil, x);
    case OpKind::kAbs:
      return t.is_float()  ? call(tir::CallOp::kAbs, x)
             : t.is_uint() ? x
                           : tir::select(x < zero, zero - x, x);
    case OpKind::kNeg:
      return zero - x;
    case OpKind::kHardSigmoid:
      return hard_sigmoid(x, node.attrs.get_float("alpha", 0.2f),
                          node.attrs.get_float("beta", 0.5f));
    case OpKind::kHardSwish:
      return x * tir::max(fconst(t, 0.0),
                          tir::min(fconst(t, 1.0), x / fconst(t, 6.0) + fconst(t, 0.5)));
    case OpKind::kGelu:
      return gelu(x, node.attrs.get_string("approximate", "none") == "tanh");
    default:
      VACC_CHECK(false) << "unary_math: " << graph::op_name(node.op);
      return x;
  }
}

// x ** y for the output type t: float64 exp(y log |x|), negative bases only to integer powers
// (odd ones negative), 0 ** 0 = 1; integer results rounded.
Expr pow_of(Expr x, Expr y, DataType t) {
  const DataType f64 = DataType::float_(64);
  Expr a = tir::cast(f64, x), b = tir::cast(f64, y);
  Expr zero = fconst(f64, 0.0), one = fconst(f64, 1.0), two = fconst(f64, 2.0);
  Expr whole = tir::eq(call(tir::CallOp::kFloor, b), b);
  Expr odd = whole && tir::eq(b - two * call(tir::CallOp::kFloor, b / two), one);
  Expr mag = call(tir::CallOp::kExp, b * call(tir::CallOp::kLog, call(tir::CallOp::kAbs, a)));
  Expr neg = tir::select(whole, tir::select(odd, zero - mag, mag),
                         call(tir::CallOp::kExp, b * call(tir::CallOp::kLog, a)));
  Expr r = tir::select(tir::eq(b, zero), one, tir::select(a < zero, neg, mag));
  return t.is_float() ? tir::cast(t, r) : tir::cast(t, call(tir::CallOp::kRound, r));
}

// a mod b, floored (the divisor's sign) or truncated (fmod: the dividend's sign).
Expr mod_of(Expr a, Expr b, bool fmod, DataType t) {
  const Expr zero = iconst(t, 0);
  if (t.is_float()) {
    const DataType f64 = DataType::float_(64);
    Expr x = tir::cast(f64, a), y = tir::cast(f64, b), q = x / y;
    Expr trunc = tir::select(q < fconst(f64, 0.0), call(tir::CallOp::kCeil, q),
                             call(tir::CallOp::kFloor, q));
    Expr r = x - trunc * y;  // C's fmod
    if (!fmod)
      r = tir::select(
          tir::ne(r, fconst(f64, 0.0)) && differ(r < fconst(f64, 0.0), y < fconst(f64, 0.0)), r + y,
          r);
    return tir::cast(t, r);
  }
  // Integers: % is floored (tir's); the truncated remainder differs where the signs differ.
  Expr bad = tir::eq(b, zero);
  if (!t.is_uint()) bad = bad || tir::eq(b, iconst(t, -1));
  Expr d = tir::select(bad, iconst(t, 1), b);
  Expr r = a % d;
  if (fmod && !t.is_uint())
    r = tir::select(tir::ne(r, zero) && differ(a < zero, d < zero), r - d, r);
  return tir::select(bad, zero, r);
}

CpuKernel build_math(const Node &node) {
  KernelBuilder kb(node);
  const Shape &out_shape = kb.out_value().shape.empty() ? Shape{1} : kb.out_value().shape;
  const DataType t = kb.out_type();
  Tensor out;
  switch (node.op) {
    case OpKind::kPow: {
      Tensor x = kb.input(0), y = kb.input(1);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        return pow_of(broadcast_read(x, i), broadcast_read(y, i), t);
      });
      break;
    }
    case OpKind::kMod: {
      Tensor a = kb.input(0), b = kb.input(1);
      const bool fmod = node.attrs.get_int("fmod", 0) != 0;
      const DataType in_t = kb.in_type(0);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        return mod_of(broadcast_read(a, i), broadcast_read(b, i), fmod, in_t);
      });
      break;
    }
    case OpKind::kSum:
    case OpKind::kMean:
    case OpKind::kMax:
    case OpKind::kMin: {
      std::vector<Tensor> xs;
      for (size_t k = 0; k < node.inputs.size(); ++k) xs.push_back(kb.input(k));
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        Expr v = broadcast_read(xs[0], i);
        for (size_t k = 1; k < xs.size(); ++k) {
          Expr w = broadcast_read(xs[k], i);
          v = node.op == OpKind::kMax   ? tir::max(v, w)
              : node.op == OpKind::kMin ? tir::min(v, w)
                                        : v + w;
        }
        if (node.op == OpKind::kMean) v = v / fconst(t, static_cast<double>(xs.size()));
        return v;
      });
      break;
    }
    default: {
      Tensor x = kb.input(0, out_shape);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        return unary_math(node, (*x)(std::vector<Expr>(i.begin(), i.end())), t);
      });
    }
  }
  return kb.finish_elementwise(out);
}

}  // namespace

Expr gelu(const Expr &x, bool tanh_form) {
  return compute::gelu(x, tanh_form, [](const Expr &v) { return tanh_of(v, v.dtype()); });
}

void add_math_lowerings(std::vector<CpuLowering> &lowerings) {
  for (OpKind op : {OpKind::kTanh, OpKind::kExp, OpKind::kLog, OpKind::kSqrt, OpKind::kErf,
                    OpKind::kReciprocal, OpKind::kFloor, OpKind::kCeil, OpKind::kAbs, OpKind::kNeg,
                    OpKind::kHardSigmoid, OpKind::kHardSwish, OpKind::kGelu, OpKind::kPow,
                    OpKind::kMod, OpKind::kSum, OpKind::kMean, OpKind::kMax, OpKind::kMin}) {
    lowerings.push_back({op, build_math});
  }
}

}  // namespace vacc::ops::cpu
