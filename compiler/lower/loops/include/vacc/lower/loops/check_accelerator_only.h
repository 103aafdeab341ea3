#pragma once

#include "vacc/tir/func.h"

namespace vacc::tir {

// The last check before accelerator code generation: scratchpad buffers are touched only
// by intrinsics (DMA, GEMM, ALU), no schedule marks or virtual-thread loops remain, and no
// scalar code is left (the accelerator has no scalar unit). Throws vacc::Error naming the
// buffer and what to schedule differently. Returns f unchanged.
Func check_accelerator_only(const Func &f);

}  // namespace vacc::tir
