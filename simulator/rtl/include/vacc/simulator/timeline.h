// A run's per-instruction timeline, shared by the engines that count cycles (rtl, perf), and
// its Chrome-trace / Perfetto JSON form: one track (thread) per engine, and one per compute
// unit ("compute: GEMM", "compute: ALU", beside the compute engine's queue track) when the
// engine traces them, one complete event ("ph": "X") per instruction and track, named after
// the instruction, with its program index and start/end cycles as arguments. Timestamps are in
// microseconds of simulated time at the config's clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vacc/isa/insn.h"
#include "vacc/simulator/rtl_tracks.h"

namespace vacc::sim {

// One instruction on one track. A track is an engine (isa::Engine: the instruction from its
// start until it leaves the engine's queue) or a unit of the compute engine (rtl_tracks.h: a
// GEMM / ALU from being handed to its unit until its last micro-op is written back; it leaves
// the queue earlier).
struct InsnSlice {
  int track = 0;        // isa::Engine, kGemmUnitTrack or kAluUnitTrack
  uint32_t index = 0;   // position in the program
  uint64_t start = 0;   // cycle, counted from the start of the run
  uint64_t end = 0;
};

// Writes `slices` to `path`; `engine` names the process ("rtl", "perf"). Throws vacc::Error
// when the file cannot be written or the engine traced no per-instruction events.
void write_timeline(const std::string &path, const std::string &engine,
                    const std::vector<InsnSlice> &slices, const std::vector<isa::Insn> &program,
                    double period_ns, bool have_events, bool have_unit_events);

}  // namespace vacc::sim
