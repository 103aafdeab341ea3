#pragma once

#include "vacc/isa/config.h"
#include "vacc/tir/func.h"

namespace vacc::tir {

// Gives every buffer allocated in the inp, wgt, acc or uop scope its first tile in that
// scratchpad (Allocate::base), stack-wise: a buffer lives for its Allocate's body and nested
// allocations sit above it. Checks each buffer's tile shape and element type against the
// config and the peak use of each scratchpad against its depth. Throws vacc::Error naming
// the buffer, its size and the scratchpad's limit when a schedule's tiles do not fit.
// With several virtual threads, each thread's ACC buffers go into ACC bank (half) t mod 2 when
// they fit there, so GEMM and ALU work of different threads can overlap (isa/README.md).
Func plan_scratchpads(const Func &f, const isa::HwConfig &config);

}  // namespace vacc::tir
