// Element-wise operators on the GPU: one thread per element, 256 threads per block. GELU is
// exact (erf, from Abramowitz and Stegun 7.1.26: |error| < 1.5e-7) or the tanh approximation.
#include "common.h"
#include "vacc/support/error.h"

namespace vacc::ops::gpu {
namespace {

Expr sigmoid(Expr v) {
  return f32(1) / (f32(1) + tir::Call::make(tir::CallOp::kExp, {f32(0) - v}));
}

Expr erf(Expr v) {
  Expr a = tir::Call::make(tir::CallOp::kAbs, {v});
  Expr t = f32(1) / (f32(1) + f32(0.3275911) * a);
  Expr poly = t * (f32(0.254829592) +
                   t * (f32(-0.284496736) +
                        t * (f32(1.421413741) + t * (f32(-1.453152027) + t * f32(1.061405429)))));
  Expr r = f32(1) - poly * tir::Call::make(tir::CallOp::kExp, {f32(0) - a * a});
  return tir::select(v < f32(0), f32(0) - r, r);
}

Expr apply(Unary op, Expr v) {
  switch (op) {
    case Unary::kRelu:
      return tir::max(v, f32(0));
    case Unary::kSigmoid:
      return sigmoid(v);
    case Unary::kTanh:
      return tir::Call::make(tir::CallOp::kTanh, {v});
    case Unary::kExp:
      return tir::Call::make(tir::CallOp::kExp, {v});
    case Unary::kGelu:
      return f32(0.5) * v * (f32(1) + erf(v * f32(0.7071067811865476)));
    case Unary::kGeluTanh: {
      Expr inner = f32(0.7978845608028654) * (v + f32(0.044715) * v * v * v);
      return f32(0.5) * v * (f32(1) + tir::Call::make(tir::CallOp::kTanh, {inner}));
    }
  }
  return v;
}

Expr apply(Binary op, Expr a, Expr b) {
  switch (op) {
    case Binary::kAdd:
      return a + b;
    case Binary::kSub:
      return a - b;
    case Binary::kMul:
      return a * b;
    case Binary::kDiv:
      return a / b;
    case Binary::kMax:
      return tir::max(a, b);
    case Binary::kMin:
      return tir::min(a, b);
  }
  return a;
}

}  // namespace

tir::Func unary(Unary op, int64_t n) {
  tir::Buffer x = tir::make_buffer("x", tir::float32(), {n});
  tir::Buffer y = tir::make_buffer("y", tir::float32(), {n});
  tir::Stmt body =
      flat_loops(n, [&](Expr i) { return tir::Store::make(y, {i}, apply(op, tir::load(x, {i}))); });
  return tir::Func{"unary", {x, y}, body};
}

tir::Func binary(Binary op, int64_t outer, int64_t b_n, int64_t inner) {
  const int64_t n = outer * b_n * inner;
  tir::Buffer a = tir::make_buffer("a", tir::float32(), {n});
  tir::Buffer b = tir::make_buffer("b", tir::float32(), {b_n});
  tir::Buffer y = tir::make_buffer("y", tir::float32(), {n});
  tir::Stmt body = flat_loops(n, [&](Expr i) {
    Expr j = inner == 1 ? i : i / static_cast<int>(inner);
    if (outer > 1) j = j % static_cast<int>(b_n);
    return tir::Store::make(y, {i}, apply(op, tir::load(a, {i}), tir::load(b, {j})));
  });
  return tir::Func{"binary", {a, b, y}, body};
}

}  // namespace vacc::ops::gpu
