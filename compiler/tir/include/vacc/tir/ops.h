// Operators that build loop-IR expressions: `i * 16 + j`, `min(a, b)`, `x < n`. A literal
// takes the type of the other operand, so `acc_value + 1` stays in the accumulator's type.
#pragma once

#include "vacc/tir/node.h"

namespace vacc::tir {

Expr make_const(DataType t, int64_t v);
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);   // floor division
Expr operator%(Expr a, Expr b);   // floor modulo (result has the divisor's sign)
Expr operator>>(Expr a, Expr b);  // the ISA's SHR: a negative amount shifts left
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr logical_not(Expr a);
Expr select(Expr c, Expr t, Expr f);
Expr cast(DataType t, Expr v);
Expr load(Buffer b, std::vector<Expr> indices);
inline Expr var_ref(const Var &v) {
  return Expr(v);
}

// The constant value of e when it is an IntImm.
bool as_const(const Expr &e, int64_t *out);
inline bool is_const(const Expr &e, int64_t v) {
  int64_t c;
  return as_const(e, &c) && c == v;
}

}  // namespace vacc::tir
