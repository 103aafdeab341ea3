// Writes a run's per-instruction slices as a Chrome-trace / Perfetto JSON timeline: one track
// (thread) per engine, and when the RTL traces them one per compute unit ("compute: GEMM",
// "compute: ALU", beside the compute engine's queue track), one complete event ("ph": "X")
// per instruction and track, named after the instruction, with its program index and
// start/end cycles as arguments. Timestamps are in microseconds of simulated time at the
// config's clock.
#pragma once

#include <string>
#include <vector>

#include "vacc/isa/insn.h"
#include "vacc/simulator/rtl_sim.h"

namespace vacc::sim {

// Throws vacc::Error when the file cannot be written or the RTL exposes no trace signals.
void write_timeline(const std::string &path, const std::vector<InsnSlice> &slices,
                    const std::vector<isa::Insn> &program, double period_ns,
                    bool have_events, bool have_unit_events);

}  // namespace vacc::sim
