// What the families' shared compute definitions (compiler/ops/<family>/compute.cc) build their
// expressions from: a float constant of an expression's own type, a one-operand intrinsic.
#pragma once

#include <utility>

#include "vacc/tir/node.h"

namespace vacc::ops::compute {

inline tir::Expr constant(const tir::Expr &like, double v) {
  return tir::FloatImm::make(like.dtype(), v);
}

inline tir::Expr call(tir::CallOp op, tir::Expr x) {
  return tir::Call::make(op, {std::move(x)});
}

}  // namespace vacc::ops::compute
