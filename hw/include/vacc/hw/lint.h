// Lint of the RTL for one config: the package is generated into a directory and Verilator
// runs `--lint-only -Wall` with hw/lint/verilator.vlt (each waiver justified there).
#pragma once

#include <string>

#include "vacc/hw/parts.h"
#include "vacc/isa/config.h"

namespace vacc::hw {

struct LintResult {
  bool clean = false;
  std::string output;  // Verilator's messages (empty when clean)
  std::string command;
};

// Throws vacc::Error when verilator cannot be run.
LintResult lint_rtl(const isa::HwConfig &config, const std::string &work_dir,
                    const std::string &verilator = "verilator");

// Finds an FPGA part or throws vacc::Error listing the known ones.
FpgaPart require_part(const std::string &name);

}  // namespace vacc::hw
