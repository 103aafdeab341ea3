// What the accelerator's error status register (reg::kErrorStatus, with the instruction index
// in reg::kErrorInsn) means, in the words every engine that reads it (rtl, an FPGA through
// XRT) reports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vacc/isa/insn.h"

namespace vacc::isa {

// An instruction in a few words, as the engines' errors name it: "load.inp pop_next",
// "alu.add", "gemm push_prev".
std::string insn_summary(const Insn &insn);

// The message for error status `status` raised at instruction `insn` ("" for status 0). With
// `program` (the instructions the run was given), an illegal or out-of-range instruction is
// named by what it decodes to. Illegal instructions come first, then range errors, then the
// cycle limit (deadlock), then any other bit.
std::string error_status_message(uint32_t status, uint32_t insn,
                                 const std::vector<Insn> *program = nullptr);

}  // namespace vacc::isa
