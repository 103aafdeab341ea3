// The text assembly of vacc programs (syntax in isa/README.md "Assembly").
// assemble() and disassemble() are inverses: disassembling a program and assembling the text
// again gives the same bytes.
#pragma once

#include <string>

#include "vacc/isa/config.h"
#include "vacc/isa/insn.h"
#include "vacc/isa/program.h"

namespace vacc::isa {

// Throws vacc::Error "SOURCE:LINE:COLUMN: message" on the first error.
Program assemble(const HwConfig &config, const std::string &text, const std::string &source);
Program assemble_file(const HwConfig &config, const std::string &path);

// The whole program: regions, their non-zero data, micro-ops, instructions.
std::string disassemble(const HwConfig &config, const Program &program);
// One instruction in canonical form; DRAM addresses are named after `program`'s regions
// when given.
std::string format_insn(const HwConfig &config, const Insn &insn,
                        const Program *program = nullptr);

}  // namespace vacc::isa
