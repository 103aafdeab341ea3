// The timing model of the whole accelerator (hw/rtl/vacc_top.sv) at the level that decides its
// cycle counter: fetch and the three instruction queues, the four token queues, the load,
// compute and store engines, and the memory system, each following its RTL module's rules
// (the files beside this one name them). It runs a program from the cycle the run starts
// (cycle 0, the RTL's trace_run_start) until the cycle its run ends, and reports the RTL's
// counters and every instruction's start and end on each track.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "timed_program.h"
#include "vacc/isa/config.h"

namespace vacc::sim::perf {

struct TimingOptions {
  uint64_t cycle_limit = 0;  // stop and report a deadlock after this many cycles (0: none)
  bool fast_forward = true;  // jump over cycles whose outcome is known (off: every cycle)
  int max_outstanding = 8;   // AXI bursts the DRAM accepts per direction (RtlOptions' default)
};

// One track of the timeline: an engine (0..2) or a compute unit (3 GEMM, 4 ALU), as in
// simulator/rtl's InsnSlice; kNotRun where the instruction never ran on that track.
inline constexpr uint64_t kNotRun = ~uint64_t{0};

struct TimingResult {
  uint64_t cycles = 0;                      // the RTL's cycle counter (0x28) at the end of the run
  std::array<uint64_t, 3> busy{}, stall{};  // per engine (0x30..0x44)
  uint64_t gemm_busy = 0;                   // 0x48: iterations entering the GEMM core
  uint64_t gemm_mac_uops = 0;               // ... of GEMMs that accumulate (MACs / peak)
  uint64_t alu_steps = 0;                   // iterations the ALU issued
  std::array<uint64_t, 3> insns{};          // instructions retired per engine
  uint64_t read_bursts = 0, read_beats = 0, write_bursts = 0, write_beats = 0;
  std::array<uint64_t, isa::kNumMemIds> loaded_elements{};  // per memory kind
  uint64_t stored_elements = 0;                             // STORE OUT's, to DRAM
  uint64_t stored_inp_elements = 0;                         // STORE INP's, on chip
  uint64_t stepped_cycles = 0;  // cycles evaluated one by one (the rest were jumped over)
  // Per instruction: start and end cycle on its engine's track and, for GEMM / ALU, on its
  // unit's track.
  std::vector<uint64_t> start, end, unit_start, unit_end;
};

// Runs `program`, fetched from byte `insn_offset` of device memory. Throws vacc::Error when
// the cycle limit is reached or the machine can make no more progress (a deadlock).
TimingResult run_timing(const isa::HwConfig &config, const TimedProgram &program,
                        uint64_t insn_offset, const TimingOptions &options);

}  // namespace vacc::sim::perf
