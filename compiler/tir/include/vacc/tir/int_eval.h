// Integer evaluation of loop-IR expressions with the node semantics: floor division and
// modulo, the ISA's SHR (a negative amount shifts left, amounts clamp to the width), and
// wraparound at each expression's type. The interpreter and accelerator code generation both
// evaluate through it; they differ only in how variables and loads are looked up and how an
// expression that cannot be evaluated is reported.
#pragma once

#include <cstdint>
#include <string>

#include "vacc/tir/node.h"

namespace vacc::tir {

int64_t floordiv(int64_t a, int64_t b);
// a >> b for b >= 0, a << -b otherwise, amounts clamped to bits - 1.
int64_t shift_right(int64_t a, int64_t b, int bits);

class IntEvaluator {
 public:
  virtual ~IntEvaluator() = default;
  int64_t eval(const Expr &e);

 protected:
  virtual int64_t var_value(const VarNode *var) = 0;
  virtual int64_t load_value(const Load *load) = 0;
  // The diagnostic for an expression that cannot be evaluated; `what` says why.
  virtual std::string eval_error(const std::string &what) = 0;

 private:
  [[noreturn]] void fail_eval(const std::string &what);
};

}  // namespace vacc::tir
