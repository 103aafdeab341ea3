#pragma once

#include "vacc/isa/config.h"
#include "vacc/tir/func.h"

namespace vacc::tir {

// Turns every copy nest marked `attr pragma = "dma_copy"` into 2D DMA operations: a LOAD
// from a DRAM tensor into an inp/wgt/acc buffer, or a STORE from an acc buffer to a DRAM
// tensor (the value narrowed by a cast to the output width). The two innermost loops must
// walk one tile on both sides; the next two become the DMA's y and x (x contiguous in the
// scratchpad, y at the row pitch), the rest stay as loops around it. Zero guards on a load
// (conv padding, reads past a tensor's edge) on y and x become the DMA's padding counts; on a
// loop outside them, a guard that only says the index lies inside the DRAM tensor (a tail
// tile's blocks past its end) skips the DMA for those blocks; `if` guards on a store (partial
// tiles) shrink its y size, or, on x, split it into one DMA per row, or skip it.
// Throws vacc::Error naming the buffer when a tile does not match the config, the body is
// not a copy, or a guard cannot be expressed as padding.
Func lower_dma_copies(const Func &f, const isa::HwConfig &config);

}  // namespace vacc::tir
