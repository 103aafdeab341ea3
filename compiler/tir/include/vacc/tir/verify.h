// The loop-IR verifier, run between passes in tests and debug builds (and by the pipeline
// when asked): every variable is bound by an enclosing loop before use and bound once,
// every buffer is a parameter or allocated by an enclosing Allocate, scratchpad buffers keep
// the tile as their innermost dimensions, constant indices are in bounds, intrinsic
// operands live in the scopes the ISA requires (checked by their make()).
// A failure is a compiler bug: it aborts with a message naming the node.
#pragma once

#include "vacc/tir/func.h"

namespace vacc::tir {

void verify(const Func &f);

}  // namespace vacc::tir
