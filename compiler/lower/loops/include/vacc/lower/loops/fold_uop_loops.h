#pragma once

#include "vacc/tir/func.h"

namespace vacc::tir {

// Folds up to two affine loops directly around a GEMM or ALU statement into the
// instruction's own loops: `for i < n { gemm acc[a + i*k] ... }` becomes one GEMM with
// loop_in = n and acc factor k (the next enclosing loop becomes loop_out). A loop folds only
// when its body is exactly that one instruction, every operand index is affine in its
// variable with a non-negative coefficient, and the extent fits the ISA's 14-bit loop field.
// Guarantees: the folded program computes the same as before (the ISA's loop semantics).
Func fold_uop_loops(const Func &f);

}  // namespace vacc::tir
