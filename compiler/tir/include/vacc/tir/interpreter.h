// Executes any loop IR on host buffers: the reference every later test compares with.
// Scalar statements follow the node semantics (floor division, the ISA's SHR, wraparound
// at each type's width); intrinsic statements follow isa/README.md exactly (DMA with zero
// padding, GEMM and ALU wrapping at the accumulator width, STORE truncating to the output
// width). Scratchpad buffers planned by plan_scratchpads live at their base in one arena per
// scratchpad sized from the config, so overlapping plans show up as wrong results.
//
// Dependency tokens are checked as the hardware would need them: a pop with no token pushed
// earlier in program order is a deadlock, and an intrinsic touching a scratchpad tile last
// touched by another engine without a token in between is a race. Both throw vacc::Error.
#pragma once

#include <cstdint>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/tir/func.h"

namespace vacc::tir {

struct InterpStats {
  int64_t dma_loads = 0, dma_stores = 0, gemms = 0, alus = 0, pushes = 0, pops = 0;
  int64_t macs = 0;
};

struct InterpOptions {
  const isa::HwConfig *config = nullptr;  // needed for planned (based) scratchpad buffers
  bool check_tokens = true;
};

// Runs f with args[i] holding the elements of f.params[i] (row-major, values wrapped to the
// buffer's type); outputs are written back into args. Throws vacc::Error on an
// out-of-bounds access, a division by zero, a deadlock or a race.
InterpStats interpret(const Func &f, std::vector<std::vector<int64_t>> &args,
                      const InterpOptions &options = {});

}  // namespace vacc::tir
