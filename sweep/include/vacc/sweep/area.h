// Silicon area of a config in mm², per component, from a coefficient table (configs/area/,
// every value with its published source): the MAC array (an 8-bit multiplier and an
// accumulator-width adder per MAC), the ALU (per lane an accumulator-width multiplier and
// three adders' worth of add, shift and min/max), the scratchpads as the RTL builds them
// (resources.h: rtl_memories, copies included) from bit-cell area, array efficiency and
// per-column / per-row periphery, and the registers (the resource model's flip-flop count
// times one flip-flop). The sum is divided by the placement utilization. Control logic
// outside these components is not counted.
#pragma once

#include <map>
#include <string>

#include "vacc/isa/config.h"
#include "vacc/sweep/coefficients.h"
#include "vacc/sweep/resources.h"

namespace vacc::sweep {

struct AreaBreakdown {
  double mac_array = 0, alu = 0, sram = 0, registers = 0;  // mm², before placement
  double total = 0;                                        // mm², after placement
  std::map<std::string, double> sram_by_memory;            // "inp", "wgt", "acc", "uop"
};

// The coefficient names an area table must define.
const std::vector<std::string> &area_coefficient_names();
CoefficientTable load_area_table(const std::string &path);
// configs/area/45nm.yaml, found like a bundled config (isa::resolve_config_path).
std::string default_area_table();

AreaBreakdown estimate_area(const isa::HwConfig &config, const Resources &resources,
                            const CoefficientTable &table);

}  // namespace vacc::sweep
