#include "vacc/tir/ops.h"

#include "vacc/support/error.h"

namespace vacc::tir {

Expr make_const(DataType t, int64_t v) {
  if (t.is_float()) return FloatImm::make(t, static_cast<double>(v));
  return IntImm::make(t, v);
}

bool as_const(const Expr &e, int64_t *out) {
  if (const IntImm *i = e.as<IntImm>()) {
    *out = i->value;
    return true;
  }
  return false;
}

// A literal adopts the type of the other operand.
static void match(Expr &a, Expr &b) {
  if (a.dtype() == b.dtype()) return;
  int64_t v;
  if (as_const(b, &v) && a.dtype().is_numeric()) {
    b = make_const(a.dtype(), v);
  } else if (as_const(a, &v) && b.dtype().is_numeric()) {
    a = make_const(b.dtype(), v);
  }
}

#define VACC_BIN(fn, Node)   \
  Expr fn(Expr a, Expr b) {  \
    match(a, b);             \
    return Node::make(a, b); \
  }
VACC_BIN(operator+, Add)
VACC_BIN(operator-, Sub)
VACC_BIN(operator*, Mul)
VACC_BIN(operator/, Div)
VACC_BIN(operator%, Mod)
VACC_BIN(operator>>, Shr)
VACC_BIN(min, Min)
VACC_BIN(max, Max)
VACC_BIN(operator<, LT)
VACC_BIN(operator<=, LE)
VACC_BIN(operator>, GT)
VACC_BIN(operator>=, GE)
VACC_BIN(eq, EQ)
VACC_BIN(ne, NE)
VACC_BIN(operator&&, And)
VACC_BIN(operator||, Or)
#undef VACC_BIN

Expr logical_not(Expr a) {
  return Not::make(std::move(a));
}
Expr select(Expr c, Expr t, Expr f) {
  match(t, f);
  return Select::make(std::move(c), std::move(t), std::move(f));
}
Expr cast(DataType t, Expr v) {
  if (v.dtype() == t) return v;
  int64_t c;
  if (as_const(v, &c) && (t.is_int() || t.is_float())) return make_const(t, c);
  return Cast::make(t, std::move(v));
}
Expr load(Buffer b, std::vector<Expr> indices) {
  return Load::make(std::move(b), std::move(indices));
}

}  // namespace vacc::tir
