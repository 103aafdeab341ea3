// Integer arithmetic analysis for affine index expressions: constant intervals of an
// expression given the ranges of its loop variables, linear forms (sum of coefficient *
// atom + constant), and an algebraic simplifier built on them. Good enough to reason
// about split/fuse index arithmetic (i*16 + j with j < 16), bounds of cached tiles and the
// guards they need; anything non-affine stays as an opaque atom.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vacc/tir/func.h"
#include "vacc/tir/node.h"

namespace vacc::tir {

inline constexpr int64_t kNegInf = INT64_MIN / 4;
inline constexpr int64_t kPosInf = INT64_MAX / 4;

// A closed interval [lo, hi]; kNegInf / kPosInf mark an unknown side.
struct Interval {
  int64_t lo = kNegInf;
  int64_t hi = kPosInf;
  bool is_const() const { return lo == hi; }
  bool bounded() const { return lo != kNegInf && hi != kPosInf; }
};
using RangeMap = std::unordered_map<const VarNode *, Interval>;

// Conservative bounds of e with each variable in `ranges` (others unbounded).
Interval bound_of(const Expr &e, const RangeMap &ranges);

// e == constant + sum(coeff_i * atom_i); atoms are variables or non-affine subexpressions.
struct LinearForm {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;
  int64_t coeff_of(const Var &v) const;
};
LinearForm linear_form(const Expr &e);
Expr from_linear_form(const LinearForm &f, DataType t);

// Coefficient of v in e when e is affine in v (v appears in no non-affine atom).
bool affine_coeff(const Expr &e, const Var &v, int64_t *coeff);

Expr simplify(const Expr &e, const RangeMap &ranges = {});
// Simplifies every expression with the ranges of the enclosing loops; drops branches whose
// condition is provably constant.
Stmt simplify(const Stmt &s, const RangeMap &ranges = {});
Func simplify(const Func &f);

// True when cond provably holds for every value of the variables in `ranges`.
bool can_prove(const Expr &cond, const RangeMap &ranges = {});

}  // namespace vacc::tir
