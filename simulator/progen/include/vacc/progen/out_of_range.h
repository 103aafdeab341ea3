// progen: a random valid program with one instruction pushed beyond a scratchpad (isa/README.md,
// "Range checks"), for checking that every engine refuses it and names the same instruction.
// The instruction's fields alone make it reach out of range (a LOAD's or STORE's sram_base, a
// GEMM's or ALU's micro-op range, or a loop count and index factor), whatever the micro-ops
// hold, and every instruction before it is unchanged, so fsim's first error is at `index`.
#pragma once

#include <cstdint>
#include <string>

#include "vacc/isa/config.h"
#include "vacc/isa/program.h"

namespace vacc::progen {

struct OutOfRangeProgram {
  isa::Program program;
  uint32_t index = 0;  // the instruction made to reach out of range
  std::string what;    // how, for failure logs
};

// generate_program(config, seed) with one of its instructions changed; the same (config, seed)
// always gives the same program.
OutOfRangeProgram out_of_range_program(const isa::HwConfig &config, uint64_t seed);

}  // namespace vacc::progen
