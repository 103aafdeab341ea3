// The math family's functions both code-generating backends compute (erf, GELU), defined once as
// loop-IR expressions in the element's own type, so that a model gets one GELU and one erf
// whichever backend runs it. Where a backend has its own primitive (tanh: the CPU composes it
// from exp in float64, the GPU's is float32 only) the definition takes it as an argument.
#pragma once

#include "vacc/tir/node.h"

namespace vacc::ops::compute {

// erf by Eigen's rational approximation on [-4, 4] (clamped outside; |error| < 1e-7 in
// float32): multiplies, adds and one divide, no transcendental call.
tir::Expr erf(const tir::Expr &x);

// tanh as the backend computes it.
using TanhFn = tir::Expr (*)(const tir::Expr &);

// GELU: 0.5 x (1 + erf(x / sqrt 2)), or with tanh_form the approximation
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
tir::Expr gelu(const tir::Expr &x, bool tanh_form, TanhFn tanh);

}  // namespace vacc::ops::compute
