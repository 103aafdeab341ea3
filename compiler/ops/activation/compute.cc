#include "ops/activation/compute.h"

#include "ops/compute/expr.h"
#include "vacc/tir/ops.h"

namespace vacc::ops::compute {

tir::Expr softplus(const tir::Expr &x) {
  const tir::Expr zero = constant(x, 0.0);
  return tir::max(x, zero) +
         call(tir::CallOp::kLog,
              constant(x, 1.0) + call(tir::CallOp::kExp, zero - call(tir::CallOp::kAbs, x)));
}

tir::Expr softsign(const tir::Expr &x) {
  return x / (constant(x, 1.0) + call(tir::CallOp::kAbs, x));
}

}  // namespace vacc::ops::compute
