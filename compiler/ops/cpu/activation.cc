// Element-wise activations, tests and comparisons on the CPU: Elu, Selu, Celu, Softplus,
// Softsign, ThresholdedRelu, Shrink, Round (half to even), Sign, PRelu (slope broadcast), IsNaN,
// IsInf, Mod (floored, or truncated with fmod; a zero integer divisor gives 0), Greater, Less,
// GreaterOrEqual, LessOrEqual, And, Or, Xor and Not, as the graph reference computes them.
#include <cmath>
#include <limits>

#include "common.h"
#include "vacc/ops/compute/functions.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

using graph::OpKind;

Expr exp_minus_one(Expr x, DataType t) {
  return call(tir::CallOp::kExp, x) - fconst(t, 1.0);
}

Expr activate(const Node &node, Expr x, DataType t) {
  auto attr = [&](const char *name, float fallback) {
    return fconst(t, node.attrs.get_float(name, fallback));
  };
  const Expr zero = iconst(t, 0);
  switch (node.op) {
    case OpKind::kElu:
      return tir::select(x < zero, attr("alpha", 1.0f) * exp_minus_one(x, t), x);
    case OpKind::kSelu:
      return attr("gamma", 1.05070102214813232421875f) *
             tir::select(x <= zero, attr("alpha", 1.67326319217681884765625f) * exp_minus_one(x, t),
                         x);
    case OpKind::kCelu: {
      const Expr alpha = attr("alpha", 1.0f);
      return tir::max(zero, x) + tir::min(zero, alpha * exp_minus_one(x / alpha, t));
    }
    case OpKind::kSoftplus:
      return compute::softplus(x);
    case OpKind::kSoftsign:
      return compute::softsign(x);
    case OpKind::kThresholdedRelu:
      return tir::select(x > attr("alpha", 1.0f), x, zero);
    case OpKind::kShrink: {
      const Expr lambd = attr("lambd", 0.5f), bias = attr("bias", 0.0f);
      return tir::select(x < zero - lambd, x + bias, tir::select(x > lambd, x - bias, zero));
    }
    case OpKind::kRound:
      return call(tir::CallOp::kRound, x);
    case OpKind::kSign:
      return tir::select(x > zero, iconst(t, 1), tir::select(x < zero, iconst(t, -1), zero));
    default:
      VACC_CHECK(false) << "activate: " << graph::op_name(node.op);
      return x;
  }
}

// p xor q of two bools (tir's ne takes numbers only).
Expr differ(Expr p, Expr q) {
  return (p && tir::logical_not(q)) || (tir::logical_not(p) && q);
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

CpuKernel build_activation(const Node &node) {
  KernelBuilder kb(node);
  const Shape out_shape = kb.out_value().shape.empty() ? Shape{1} : kb.out_value().shape;
  const DataType in_t = kb.in_type(0);
  Tensor out;
  switch (node.op) {
    case OpKind::kPRelu:
    case OpKind::kMod:
    case OpKind::kGreater:
    case OpKind::kLess:
    case OpKind::kGreaterOrEqual:
    case OpKind::kLessOrEqual:
    case OpKind::kAnd:
    case OpKind::kOr:
    case OpKind::kXor: {
      Tensor a = kb.input(0), b = kb.input(1);
      const bool fmod = node.attrs.get_int("fmod", 0) != 0;
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        Expr x = broadcast_read(a, i), y = broadcast_read(b, i);
        if (node.op == OpKind::kPRelu) return tir::select(x < iconst(in_t, 0), x * y, x);
        if (node.op == OpKind::kMod) return mod_of(x, y, fmod, in_t);
        return compare(node.op, x, y);
      });
      break;
    }
    default: {
      Tensor x = kb.input(0, out_shape);
      const bool pos = node.attrs.get_int("detect_positive", 1) != 0;
      const bool neg = node.attrs.get_int("detect_negative", 1) != 0;
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        Expr v = (*x)(std::vector<Expr>(i.begin(), i.end()));
        switch (node.op) {
          case OpKind::kNot:
            return tir::logical_not(v);
          case OpKind::kIsNaN:
            return tir::ne(v, v);
          case OpKind::kIsInf: {
            const Expr inf = fconst(in_t, std::numeric_limits<double>::infinity());
            Expr hit = tir::make_const(DataType::bool_(), 0);
            if (pos) hit = tir::eq(v, inf);
            if (neg)
              hit = pos ? hit || tir::eq(v, fconst(in_t, -HUGE_VAL))
                        : tir::eq(v, fconst(in_t, -HUGE_VAL));
            return hit;
          }
          default:
            return activate(node, v, in_t);
        }
      });
    }
  }
  schedule::Schedule s({out});
  schedule_elementwise(s, out);
  return kb.finish(s, out);
}

}  // namespace

void add_activation_lowerings(std::vector<CpuLowering> &lowerings) {
  for (OpKind op : {OpKind::kElu,         OpKind::kSelu,
                    OpKind::kCelu,        OpKind::kSoftplus,
                    OpKind::kSoftsign,    OpKind::kThresholdedRelu,
                    OpKind::kShrink,      OpKind::kRound,
                    OpKind::kSign,        OpKind::kPRelu,
                    OpKind::kIsNaN,       OpKind::kIsInf,
                    OpKind::kMod,         OpKind::kGreater,
                    OpKind::kLess,        OpKind::kGreaterOrEqual,
                    OpKind::kLessOrEqual, OpKind::kAnd,
                    OpKind::kOr,          OpKind::kXor,
                    OpKind::kNot}) {
    lowerings.push_back({op, build_activation});
  }
}

}  // namespace vacc::ops::cpu
