// perf: the fast cycle model. fsim executes the program (so the data is bit-exact by
// construction and every diagnostic is fsim's) and a timing model of the RTL (simulator/perf,
// README.md there) adds time: the RTL's counters (cycles, busy and stall per engine, GEMM busy,
// MACs, DRAM traffic) and its per-instruction timeline. The config is read at run time: any
// valid config runs without a rebuild. Calibrated against the rtl engine (`vacc calibrate`).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/simulator/fsim.h"
#include "vacc/simulator/timeline.h"

namespace vacc::sim {

struct PerfOptions {
  // Skip the arithmetic: fsim still checks and counts everything, but no data moves, so the
  // device memory keeps its input. Timing does not depend on data values, so the counters
  // and timeline are those of a full run (for sweeps and benchmarks that need no outputs).
  bool timing_only = false;
  uint64_t cycle_limit = 0;    // report a deadlock after this many cycles (0: none)
  std::string timeline_path;   // Chrome-trace/Perfetto JSON of the run, if set
  bool record_slices = false;  // keep slices() even without a timeline file
  bool fast_forward = true;    // off: the model evaluates every cycle (for its tests)
  int max_outstanding = 8;     // AXI bursts in flight per direction (as RtlOptions)
};

class PerfSim {
 public:
  explicit PerfSim(const isa::HwConfig &config, PerfOptions options = {});
  ~PerfSim();
  PerfSim(const PerfSim &) = delete;
  PerfSim &operator=(const PerfSim &) = delete;

  // Runs `insn_count` instructions read from byte `insn_offset` of `dram`, the whole device
  // memory, modified in place (unless timing_only). Throws vacc::Error with fsim's message for
  // a program fsim rejects, and on a deadlock of the timing model or the cycle limit.
  void run(std::vector<uint8_t> &dram, uint64_t insn_offset, uint32_t insn_count);

  // The counters of the last run: the RTL's (cycles, load_busy .. gemm_busy, macs,
  // dram_read_bytes/bursts, dram_write_bytes/bursts) and fsim's (insns_*, gemm_uops, alu_ops,
  // load_bytes_*, store_bytes_*), all counted by the timing model.
  std::map<std::string, uint64_t> counters() const;
  // The last run's per-instruction slices (with record_slices or a timeline path).
  const std::vector<InsnSlice> &slices() const { return slices_; }
  void set_record_slices(bool on) { options_.record_slices = on; }
  // fsim's own statistics of the last run (what the timing model's counts must equal).
  const FsimStats &fsim_stats() const { return fsim_.stats(); }

 private:
  isa::HwConfig config_;
  PerfOptions options_;
  Fsim fsim_;
  std::map<std::string, uint64_t> counters_;
  std::vector<InsnSlice> slices_;
};

}  // namespace vacc::sim
