#include "vacc/tir/arith.h"

#include <algorithm>

#include "vacc/support/error.h"
#include "vacc/tir/equal.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/int_eval.h"
#include "vacc/tir/ops.h"

namespace vacc::tir {
namespace {

int64_t sat(int64_t v) {
  return std::clamp(v, kNegInf, kPosInf);
}
int64_t add_s(int64_t a, int64_t b) {
  if (a == kNegInf || b == kNegInf) return kNegInf;
  if (a == kPosInf || b == kPosInf) return kPosInf;
  return sat(a + b);
}
int64_t mul_s(int64_t a, int64_t c) {
  if (c == 0) return 0;
  if (a == kNegInf || a == kPosInf) return (a > 0) == (c > 0) ? kPosInf : kNegInf;
  __int128 r = static_cast<__int128>(a) * c;
  if (r > kPosInf) return kPosInf;
  if (r < kNegInf) return kNegInf;
  return static_cast<int64_t>(r);
}
int64_t floordiv_s(int64_t a, int64_t c) {
  if (a == kNegInf || a == kPosInf) return a;
  return floordiv(a, c);
}

Interval type_range(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (t.is_float()) return {};
  if (t.is_uint()) {
    return t.bits >= 62 ? Interval{0, kPosInf} : Interval{0, (int64_t{1} << t.bits) - 1};
  }
  if (t.bits >= 62) return {};
  return {-(int64_t{1} << (t.bits - 1)), (int64_t{1} << (t.bits - 1)) - 1};
}

}  // namespace

Interval bound_of(const Expr &e, const RangeMap &ranges) {
  int64_t c;
  if (as_const(e, &c)) return {c, c};
  switch (e.kind()) {
    case ExprKind::kVar: {
      auto it = ranges.find(e.as<VarNode>());
      return it == ranges.end() ? type_range(e.dtype()) : it->second;
    }
    case ExprKind::kAdd: {
      Interval a = bound_of(e.as<Add>()->a, ranges), b = bound_of(e.as<Add>()->b, ranges);
      return {add_s(a.lo, b.lo), add_s(a.hi, b.hi)};
    }
    case ExprKind::kSub: {
      Interval a = bound_of(e.as<Sub>()->a, ranges), b = bound_of(e.as<Sub>()->b, ranges);
      return {add_s(a.lo, mul_s(b.hi, -1)), add_s(a.hi, mul_s(b.lo, -1))};
    }
    case ExprKind::kMul: {
      const Mul *m = e.as<Mul>();
      Interval a = bound_of(m->a, ranges), b = bound_of(m->b, ranges);
      if (!b.is_const() && a.is_const()) std::swap(a, b);
      if (b.is_const()) {
        int64_t x = mul_s(a.lo, b.lo), y = mul_s(a.hi, b.lo);
        return {std::min(x, y), std::max(x, y)};
      }
      if (!a.bounded() || !b.bounded()) return {};
      int64_t v[4] = {mul_s(a.lo, b.lo), mul_s(a.lo, b.hi), mul_s(a.hi, b.lo), mul_s(a.hi, b.hi)};
      return {*std::min_element(v, v + 4), *std::max_element(v, v + 4)};
    }
    case ExprKind::kDiv: {
      const Div *d = e.as<Div>();
      Interval a = bound_of(d->a, ranges), b = bound_of(d->b, ranges);
      if (!b.is_const() || b.lo <= 0) return {};
      return {floordiv_s(a.lo, b.lo), floordiv_s(a.hi, b.lo)};
    }
    case ExprKind::kMod: {
      const Mod *d = e.as<Mod>();
      Interval a = bound_of(d->a, ranges), b = bound_of(d->b, ranges);
      if (!b.is_const() || b.lo <= 0) return {};
      if (a.bounded() && floordiv(a.lo, b.lo) == floordiv(a.hi, b.lo)) {
        int64_t base = floordiv(a.lo, b.lo) * b.lo;
        return {a.lo - base, a.hi - base};
      }
      return {0, b.lo - 1};
    }
    case ExprKind::kMin: {
      Interval a = bound_of(e.as<Min>()->a, ranges), b = bound_of(e.as<Min>()->b, ranges);
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    }
    case ExprKind::kMax: {
      Interval a = bound_of(e.as<Max>()->a, ranges), b = bound_of(e.as<Max>()->b, ranges);
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::kSelect: {
      Interval a = bound_of(e.as<Select>()->t, ranges), b = bound_of(e.as<Select>()->f, ranges);
      return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::kCast: {
      Interval a = bound_of(e.as<Cast>()->value, ranges), t = type_range(e.dtype());
      if (a.lo >= t.lo && a.hi <= t.hi) return a;
      return t;
    }
    default:
      return type_range(e.dtype());
  }
}

// ------------------------------------------------------------------------ linear forms

int64_t LinearForm::coeff_of(const Var &v) const {
  for (const auto &[t, c] : terms) {
    if (t.get() == v.get()) return c;
  }
  return 0;
}

namespace {
void add_term(LinearForm *f, const Expr &atom, int64_t c) {
  if (c == 0) return;
  for (auto &[t, k] : f->terms) {
    if (t.same_as(atom) || (!atom.as<VarNode>() && structural_equal(t, atom) && !t.as<VarNode>())) {
      k += c;
      return;
    }
  }
  f->terms.emplace_back(atom, c);
}

void linearize(const Expr &e, int64_t scale, LinearForm *f) {
  int64_t c;
  if (as_const(e, &c)) {
    f->constant += scale * c;
    return;
  }
  if (const Add *a = e.as<Add>()) {
    linearize(a->a, scale, f);
    linearize(a->b, scale, f);
    return;
  }
  if (const Sub *s = e.as<Sub>()) {
    linearize(s->a, scale, f);
    linearize(s->b, -scale, f);
    return;
  }
  if (const Mul *m = e.as<Mul>()) {
    if (as_const(m->b, &c)) return linearize(m->a, scale * c, f);
    if (as_const(m->a, &c)) return linearize(m->b, scale * c, f);
  }
  add_term(f, e, scale);
}
}  // namespace

LinearForm linear_form(const Expr &e) {
  LinearForm f;
  linearize(e, 1, &f);
  std::vector<std::pair<Expr, int64_t>> kept;
  for (auto &t : f.terms) {
    if (t.second != 0) kept.push_back(t);
  }
  f.terms = std::move(kept);
  return f;
}

Expr from_linear_form(const LinearForm &f, DataType t) {
  // Canonical order: larger |coefficient| first, ties in order of appearance.
  std::vector<std::pair<Expr, int64_t>> terms = f.terms;
  std::stable_sort(terms.begin(), terms.end(), [](const auto &x, const auto &y) {
    return std::abs(x.second) > std::abs(y.second);
  });
  Expr acc;
  for (const auto &[atom, c] : terms) {
    Expr a = atom.dtype() == t ? atom : cast(t, atom);
    if (!acc.defined()) {
      acc = c == 1 ? a : Mul::make(a, make_const(t, c));
    } else if (c > 0) {
      acc = Add::make(acc, c == 1 ? a : Mul::make(a, make_const(t, c)));
    } else {
      acc = Sub::make(acc, c == -1 ? a : Mul::make(a, make_const(t, -c)));
    }
  }
  if (!acc.defined()) return make_const(t, f.constant);
  if (f.constant > 0) return Add::make(acc, make_const(t, f.constant));
  if (f.constant < 0) return Sub::make(acc, make_const(t, -f.constant));
  return acc;
}

bool affine_coeff(const Expr &e, const Var &v, int64_t *coeff) {
  LinearForm f = linear_form(e);
  *coeff = 0;
  for (const auto &[atom, c] : f.terms) {
    if (atom.get() == v.get()) {
      *coeff += c;
    } else if (uses_var(atom, v)) {
      return false;
    }
  }
  return true;
}

// --------------------------------------------------------------------------- simplifier

namespace {

int64_t shr_value(int64_t a, int64_t b, int bits) {
  if (b >= 0) return a >> std::min<int64_t>(b, bits - 1);
  return static_cast<int64_t>(static_cast<uint64_t>(a) << std::min<int64_t>(-b, bits - 1));
}

// Differences of two values of type t are computed in t: exact only for wide integer types
// (an int8 difference wraps), so bound-based rewrites of min/max/comparisons need one.
bool exact_diff(DataType t) {
  return t.is_int() && t.bits >= 32;
}

class Simplifier : public Mutator {
 public:
  explicit Simplifier(const RangeMap &r) : ranges_(r) {}
  using Mutator::mutate;

 protected:
  Expr linear(const Expr &e) {
    if (!e.dtype().is_int()) return e;
    return from_linear_form(linear_form(e), e.dtype());
  }
  Expr mutate_Add(const Add *op, const Expr &self) override {
    return linear(Mutator::mutate_Add(op, self));
  }
  Expr mutate_Sub(const Sub *op, const Expr &self) override {
    return linear(Mutator::mutate_Sub(op, self));
  }
  Expr mutate_Mul(const Mul *op, const Expr &self) override {
    Expr e = Mutator::mutate_Mul(op, self);
    const Mul *m = e.as<Mul>();
    if (!m) return e;
    int64_t a, b;
    if (as_const(m->a, &a) && as_const(m->b, &b)) return make_const(e.dtype(), a * b);
    if (as_const(m->a, &a) || as_const(m->b, &b)) return linear(e);
    return e;
  }
  Expr div_mod(const Expr &e, bool is_div) {
    const Expr &x = is_div ? e.as<Div>()->a : e.as<Mod>()->a;
    const Expr &y = is_div ? e.as<Div>()->b : e.as<Mod>()->b;
    int64_t c, a;
    if (!as_const(y, &c) || c <= 0) return e;
    if (as_const(x, &a))
      return make_const(e.dtype(), is_div ? floordiv(a, c) : a - floordiv(a, c) * c);
    // x = c*q + r: keep the terms divisible by c in q, bound the rest.
    LinearForm f = linear_form(x), q, r;
    for (const auto &t : f.terms) {
      if (t.second % c == 0) {
        q.terms.emplace_back(t.first, t.second / c);
      } else {
        r.terms.push_back(t);
      }
    }
    r.constant = f.constant;
    Expr rest = from_linear_form(r, e.dtype());
    Interval b = bound_of(rest, ranges_);
    if (b.bounded() && floordiv(b.lo, c) == floordiv(b.hi, c)) {
      int64_t bucket = floordiv(b.lo, c);
      if (is_div) {
        q.constant = bucket;
        return from_linear_form(q, e.dtype());
      }
      r.constant -= bucket * c;
      return from_linear_form(r, e.dtype());
    }
    return e;
  }
  Expr mutate_Div(const Div *op, const Expr &self) override {
    Expr e = Mutator::mutate_Div(op, self);
    return e.as<Div>() ? div_mod(e, true) : e;
  }
  Expr mutate_Mod(const Mod *op, const Expr &self) override {
    Expr e = Mutator::mutate_Mod(op, self);
    return e.as<Mod>() ? div_mod(e, false) : e;
  }
  Expr mutate_Min(const Min *op, const Expr &self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (!exact_diff(a.dtype())) {
      return a.same_as(op->a) && b.same_as(op->b) ? self : Min::make(a, b);
    }
    Interval d = bound_of(simplify_diff(a, b), ranges_);
    if (d.hi <= 0) return a;
    if (d.lo >= 0) return b;
    return a.same_as(op->a) && b.same_as(op->b) ? self : Min::make(a, b);
  }
  Expr mutate_Max(const Max *op, const Expr &self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (!exact_diff(a.dtype())) {
      return a.same_as(op->a) && b.same_as(op->b) ? self : Max::make(a, b);
    }
    Interval d = bound_of(simplify_diff(a, b), ranges_);
    if (d.lo >= 0) return a;
    if (d.hi <= 0) return b;
    return a.same_as(op->a) && b.same_as(op->b) ? self : Max::make(a, b);
  }
  Expr mutate_Shr(const Shr *op, const Expr &self) override {
    Expr e = Mutator::mutate_Shr(op, self);
    int64_t a, b;
    const Shr *s = e.as<Shr>();
    if (s && as_const(s->a, &a) && as_const(s->b, &b)) {
      return make_const(e.dtype(), shr_value(a, b, e.dtype().bits));
    }
    return e;
  }
  Expr simplify_diff(const Expr &a, const Expr &b) {
    return from_linear_form(linear_form(Sub::make(a, b)), a.dtype());
  }
  Expr compare(const Expr &e, const Expr &a, const Expr &b, int64_t lo_true, int64_t hi_true) {
    // True when a - b lies within [lo_true, hi_true] for all values, false when outside.
    if (!exact_diff(a.dtype())) return e;
    Interval d = bound_of(simplify_diff(a, b), ranges_);
    if (d.lo >= lo_true && d.hi <= hi_true) return make_const(DataType::bool_(), 1);
    if (d.hi < lo_true || d.lo > hi_true) return make_const(DataType::bool_(), 0);
    return e;
  }
#define VACC_CMP(name, lo, hi)                                    \
  Expr mutate_##name(const name *op, const Expr &self) override { \
    Expr e = Mutator::mutate_##name(op, self);                    \
    const name *n = e.as<name>();                                 \
    return n ? compare(e, n->a, n->b, lo, hi) : e;                \
  }
  VACC_CMP(LT, kNegInf, -1)
  VACC_CMP(LE, kNegInf, 0)
  VACC_CMP(GT, 1, kPosInf)
  VACC_CMP(GE, 0, kPosInf)
  VACC_CMP(EQ, 0, 0)
#undef VACC_CMP
  Expr mutate_NE(const NE *op, const Expr &self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (!exact_diff(a.dtype())) {
      return a.same_as(op->a) && b.same_as(op->b) ? self : NE::make(a, b);
    }
    Interval d = bound_of(simplify_diff(a, b), ranges_);
    if (d.hi < 0 || d.lo > 0) return make_const(DataType::bool_(), 1);
    if (d.lo == 0 && d.hi == 0) return make_const(DataType::bool_(), 0);
    return NE::make(a, b);
  }
  Expr mutate_And(const And *op, const Expr &self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    int64_t c;
    if (as_const(a, &c)) return c ? b : a;
    if (as_const(b, &c)) return c ? a : b;
    return a.same_as(op->a) && b.same_as(op->b) ? self : And::make(a, b);
  }
  Expr mutate_Or(const Or *op, const Expr &self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    int64_t c;
    if (as_const(a, &c)) return c ? a : b;
    if (as_const(b, &c)) return c ? b : a;
    return a.same_as(op->a) && b.same_as(op->b) ? self : Or::make(a, b);
  }
  Expr mutate_Not(const Not *op, const Expr &self) override {
    Expr a = mutate(op->a);
    int64_t c;
    if (as_const(a, &c)) return make_const(DataType::bool_(), !c);
    return a.same_as(op->a) ? self : Not::make(a);
  }
  Expr mutate_Select(const Select *op, const Expr &self) override {
    Expr c = mutate(op->cond);
    int64_t v;
    if (as_const(c, &v)) return v ? mutate(op->t) : mutate(op->f);
    Expr t = mutate(op->t), f = mutate(op->f);
    if (c.same_as(op->cond) && t.same_as(op->t) && f.same_as(op->f)) return self;
    return Select::make(c, t, f);
  }
  Expr mutate_Cast(const Cast *op, const Expr &self) override {
    Expr v = mutate(op->value);
    int64_t c;
    if (as_const(v, &c)) return make_const(op->dtype, c);
    if (v.dtype() == op->dtype) return v;
    return v.same_as(op->value) ? self : Cast::make(op->dtype, v);
  }

  Stmt mutate_For(const For *op, const Stmt &self) override {
    ranges_[op->var.get()] = {0, op->extent - 1};
    Stmt b = mutate(op->body);
    ranges_.erase(op->var.get());
    return b.same_as(op->body) ? self : For::make(op->var, op->extent, op->for_kind, b);
  }
  Stmt mutate_IfThenElse(const IfThenElse *op, const Stmt &self) override {
    Expr c = mutate(op->cond);
    int64_t v;
    if (as_const(c, &v)) {
      if (v) return mutate(op->then_case);
      return op->else_case.defined() ? mutate(op->else_case) : Seq::make({});
    }
    Stmt t = mutate(op->then_case);
    Stmt e = op->else_case.defined() ? mutate(op->else_case) : Stmt();
    if (c.same_as(op->cond) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
    return IfThenElse::make(c, t, e);
  }

 private:
  RangeMap ranges_;
};

}  // namespace

Expr simplify(const Expr &e, const RangeMap &ranges) {
  return Simplifier(ranges).mutate(e);
}
Stmt simplify(const Stmt &s, const RangeMap &ranges) {
  return Simplifier(ranges).mutate(s);
}
Func simplify(const Func &f) {
  return {f.name, f.params, simplify(f.body)};
}

bool can_prove(const Expr &cond, const RangeMap &ranges) {
  return is_const(simplify(cond, ranges), 1);
}

}  // namespace vacc::tir
