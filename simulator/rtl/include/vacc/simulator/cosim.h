// Co-simulation: one program on fsim (the reference) and on the RTL, every DRAM byte compared.
// The random programs come from progen; a failure names the seed, the first differing address
// (with its region and element) and how to reproduce it.
#pragma once

#include <cstdint>
#include <string>

#include "vacc/isa/config.h"
#include "vacc/isa/program.h"
#include "vacc/simulator/rtl_sim.h"

namespace vacc::sim {

struct CosimOutcome {
  bool ok = false;
  std::string message;  // empty when ok
  uint64_t rtl_cycles = 0;
};

// Runs `program` on a fresh fsim and on `rtl`; `label` names the program in the message.
CosimOutcome cosim_program(const isa::HwConfig &config, RtlSim &rtl, const isa::Program &program,
                           const std::string &label);

// The random program of `seed` (progen::generate_program).
CosimOutcome cosim_seed(const isa::HwConfig &config, RtlSim &rtl, uint64_t seed);

// progen::out_of_range_program(config, seed): fsim and the RTL must both refuse it, naming the
// instruction made to reach out of range (the RTL through its error status and index).
CosimOutcome cosim_out_of_range_seed(const isa::HwConfig &config, RtlSim &rtl, uint64_t seed);

}  // namespace vacc::sim
