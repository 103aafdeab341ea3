#include "vacc/tir/int_eval.h"

#include <algorithm>

#include "vacc/support/error.h"
#include "vacc/tir/dtype.h"

namespace vacc::tir {

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t shift_right(int64_t a, int64_t b, int bits) {
  if (b >= 0) return a >> std::min<int64_t>(b, bits - 1);
  return static_cast<int64_t>(static_cast<uint64_t>(a) << std::min<int64_t>(-b, bits - 1));
}

void IntEvaluator::fail_eval(const std::string &what) { fail("{}", eval_error(what)); }

int64_t IntEvaluator::eval(const Expr &e) {
  switch (e.kind()) {
    case ExprKind::kIntImm:
      return e.as<IntImm>()->value;
    case ExprKind::kFloatImm:
    case ExprKind::kCall:
      fail_eval("float expressions run on the CPU backend only");
    case ExprKind::kVar:
      return var_value(e.as<VarNode>());
#define VACC_ARITH(name, expr_)               \
  case ExprKind::k##name: {                   \
    const name *op = e.as<name>();            \
    int64_t a = eval(op->a), b = eval(op->b); \
    return wrap_to(e.dtype(), expr_);         \
  }
      VACC_ARITH(Add, a + b)
      VACC_ARITH(Sub, a - b)
      VACC_ARITH(Mul, static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)))
      VACC_ARITH(Min, std::min(a, b))
      VACC_ARITH(Max, std::max(a, b))
      VACC_ARITH(Shr, shift_right(a, b, e.dtype().bits))
      VACC_ARITH(EQ, a == b)
      VACC_ARITH(NE, a != b)
      VACC_ARITH(LT, a < b)
      VACC_ARITH(LE, a <= b)
      VACC_ARITH(GT, a > b)
      VACC_ARITH(GE, a >= b)
#undef VACC_ARITH
    case ExprKind::kDiv:
    case ExprKind::kMod: {
      const bool div = e.kind() == ExprKind::kDiv;
      const int64_t a = eval(div ? e.as<Div>()->a : e.as<Mod>()->a);
      const int64_t b = eval(div ? e.as<Div>()->b : e.as<Mod>()->b);
      if (b == 0) fail_eval("division by zero");
      const int64_t q = floordiv(a, b);
      return wrap_to(e.dtype(), div ? q : a - q * b);
    }
    case ExprKind::kAnd:
      return eval(e.as<And>()->a) && eval(e.as<And>()->b);
    case ExprKind::kOr:
      return eval(e.as<Or>()->a) || eval(e.as<Or>()->b);
    case ExprKind::kNot:
      return !eval(e.as<Not>()->a);
    case ExprKind::kCast:
      return wrap_to(e.dtype(), eval(e.as<Cast>()->value));
    case ExprKind::kSelect: {
      const Select *op = e.as<Select>();
      return eval(op->cond) ? eval(op->t) : eval(op->f);
    }
    case ExprKind::kLoad:
      return load_value(e.as<Load>());
  }
  fail_eval("an unknown expression kind");
}

}  // namespace vacc::tir
