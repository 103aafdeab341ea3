// The activation family's functions both code-generating backends compute (Softplus, Softsign),
// defined once as loop-IR expressions in the element's own type.
#pragma once

#include "vacc/tir/node.h"

namespace vacc::ops::compute {

// Softplus as max(x, 0) + log(1 + exp(-|x|)): finite for large x.
tir::Expr softplus(const tir::Expr &x);

// Softsign: x / (1 + |x|).
tir::Expr softsign(const tir::Expr &x);

}  // namespace vacc::ops::compute
