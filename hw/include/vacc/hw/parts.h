// Capacities of FPGA parts that vacc targets, for "does this config fit?" after synthesis.
// Figures are the vendors' published totals (LUTs, flip-flops, DSP slices, 36 Kb block RAMs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vacc::hw {

struct FpgaPart {
  std::string name;    // part number prefix, e.g. "xc7z020"
  std::string board;   // a board or card built on it
  std::string family;  // yosys synth_xilinx -family
  int64_t luts = 0;
  int64_t ffs = 0;
  int64_t dsps = 0;
  int64_t bram36 = 0;  // 36 Kb block RAMs (a RAMB18 counts as half)
  int64_t uram = 0;    // 288 Kb UltraRAMs (UltraScale+)
};

const std::vector<FpgaPart> &known_parts();
// Finds a part by its name or a longer part number ("xc7z020clg400-1"); nullopt if unknown.
std::optional<FpgaPart> find_part(const std::string &name);

}  // namespace vacc::hw
