#pragma once

#include "vacc/isa/config.h"
#include "vacc/tir/func.h"

namespace vacc::tir {

// Replaces every loop nest marked `attr tensorize = "gemm"` by a GEMM (or, for the
// reduction's init nest, a reset GEMM), and every nest marked `attr pragma = "alu"` by ALU
// instructions: the two innermost loops must be one ACC tile and the body one ALU operation
// of the destination with an ACC tile or a 16-bit constant; the loops around stay.
// Matching is structural against the intrinsics' own descriptions (intrin/intrin.h): loop
// count and extents, index patterns, operand scopes and types, the arithmetic.
// Requires: operands cached into the scopes the intrinsic reads (lower_dma_copies may run
// before or after). Guarantees: no tensorize/alu marks remain. Throws vacc::Error naming the
// loop, buffer, index or scope that differs, and for a guard left by a split whose factor
// does not divide its axis inside the intrinsic's loops (it cannot skip part of a tile); a
// guard on loops outside them (a reduction's tail) wraps the whole intrinsic instead.
Func tensorize(const Func &f, const isa::HwConfig &config);

}  // namespace vacc::tir
