#include "ops/math/compute.h"

#include <cmath>

#include "ops/compute/expr.h"
#include "vacc/tir/ops.h"

namespace vacc::ops::compute {

tir::Expr erf(const tir::Expr &x) {
  static const double kAlpha[] = {
      -1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04, -5.69250639462346e-05,
      -2.10102402082508e-06, 2.77068142495902e-08,  -2.72614225801306e-10};
  static const double kBeta[] = {-1.42647390514189e-02, -7.37332916720468e-03,
                                 -1.68282697438203e-03, -2.13374055278905e-04,
                                 -1.45660718464996e-05};
  tir::Expr c = tir::min(tir::max(x, constant(x, -4.0)), constant(x, 4.0));
  tir::Expr c2 = c * c;
  tir::Expr p = constant(x, kAlpha[6]);
  for (int k = 5; k >= 0; --k) p = p * c2 + constant(x, kAlpha[k]);
  tir::Expr q = constant(x, kBeta[4]);
  for (int k = 3; k >= 0; --k) q = q * c2 + constant(x, kBeta[k]);
  return c * p / q;
}

tir::Expr gelu(const tir::Expr &x, bool tanh_form, TanhFn tanh) {
  tir::Expr inner =
      tanh_form ? tanh(constant(x, std::sqrt(2 / M_PI)) * (x + constant(x, 0.044715) * x * x * x))
                : erf(x * constant(x, M_SQRT1_2));
  return constant(x, 0.5) * x * (constant(x, 1.0) + inner);
}

}  // namespace vacc::ops::compute
