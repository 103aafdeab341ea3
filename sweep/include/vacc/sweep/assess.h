// What a design point costs in hardware, before anything runs: its FPGA resources (the
// analytic model, or Yosys' own counts when the point was synthesized), whether it fits its
// config's FPGA part, its area, and the first sweep constraint it breaks, if any.
#pragma once

#include <optional>
#include <string>

#include "vacc/isa/config.h"
#include "vacc/sweep/coefficients.h"
#include "vacc/sweep/resources.h"
#include "vacc/sweep/spec.h"
#include "vacc/sweep/store.h"

namespace vacc::sweep {

// Fills the hardware columns of `record` (resources, part, fits, area and its split, clock,
// peak MACs, DRAM bandwidth) from `resources` ("model" or "yosys" in `source`).
void assess_hardware(PointRecord &record, const isa::HwConfig &config, const Resources &resources,
                     const std::string &source, const CoefficientTable &area_table);

// The first constraint `record` breaks, as "constraint 'dsp <= 220' (dsp 307)"; nullopt if none.
std::optional<std::string> broken_constraint(const PointRecord &record,
                                             const std::vector<Constraint> &constraints);

}  // namespace vacc::sweep
