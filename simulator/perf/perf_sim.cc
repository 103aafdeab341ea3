#include "vacc/simulator/perf_sim.h"

#include <algorithm>
#include <cstdint>

#include "machine.h"
#include "timed_program.h"
#include "vacc/support/error.h"

namespace vacc::sim {

namespace {

// fsim runs first, so a runaway program must be stopped there too: with fsim's operations
// bounded by what the RTL can do in `cycle_limit` cycles (per cycle at most an instruction per
// engine, a GEMM and an ALU micro-op, and a bus beat's worth of tiles each way), every run the
// cycle limit lets through also passes fsim's limit.
uint64_t fsim_op_limit(const isa::HwConfig &config, uint64_t cycle_limit) {
  if (cycle_limit == 0) return 0;
  int smallest_tile = config.out_tile_bytes();
  for (int m = 0; m < isa::kNumMemIds; ++m)
    smallest_tile = std::min(smallest_tile, config.tile_bytes(static_cast<isa::MemId>(m)));
  const uint64_t tiles_per_beat = std::max(1, config.bus_bits / 8 / std::max(1, smallest_tile));
  const uint64_t per_cycle = 3 + 2 + 2 * tiles_per_beat;
  return cycle_limit > UINT64_MAX / per_cycle ? 0 : cycle_limit * per_cycle;
}

}  // namespace

PerfSim::PerfSim(const isa::HwConfig &config, PerfOptions options)
    : config_(config),
      options_(std::move(options)),
      fsim_(config_, FsimOptions{.data = !options_.timing_only,
                                 .op_limit = fsim_op_limit(config_, options_.cycle_limit)}) {}

PerfSim::~PerfSim() = default;

void PerfSim::run(std::vector<uint8_t> &dram, uint64_t insn_offset, uint32_t insn_count) {
  counters_.clear();
  slices_.clear();
  // The timing model reads instructions and micro-ops as the host wrote them; fsim's checks
  // and messages come first (a program it rejects never reaches the model).
  perf::TimedProgram program;
  bool decoded = true;
  try {
    program = perf::decode_timed_program(config_, dram, insn_offset, insn_count);
  } catch (const Error &) {
    decoded = false;  // fsim names the instruction and the field below
  }
  fsim_.run(dram, insn_offset, insn_count);
  VACC_CHECK(decoded) << "fsim ran a program the timing model could not decode";

  perf::TimingOptions t;
  t.cycle_limit = options_.cycle_limit;
  t.fast_forward = options_.fast_forward;
  t.max_outstanding = options_.max_outstanding;
  const perf::TimingResult r = perf::run_timing(config_, program, insn_offset, t);

  auto &c = counters_;
  c["cycles"] = r.cycles;
  c["load_busy"] = r.busy[0];
  c["load_stall"] = r.stall[0];
  c["compute_busy"] = r.busy[1];
  c["compute_stall"] = r.stall[1];
  c["store_busy"] = r.busy[2];
  c["store_stall"] = r.stall[2];
  c["gemm_busy"] = r.gemm_busy;
  c["gemm_uops"] = r.gemm_busy;
  c["macs"] = r.gemm_mac_uops * static_cast<uint64_t>(config_.peak_macs_per_cycle());
  c["alu_ops"] = r.alu_steps * static_cast<uint64_t>(config_.batch * config_.block_out);
  for (int e = 0; e < isa::kNumEngines; ++e)
    c[std::string("insns_") + isa::engine_name(static_cast<isa::Engine>(e))] = r.insns[e];
  for (int m = 0; m < isa::kNumMemIds; ++m) {
    const auto mem = static_cast<isa::MemId>(m);
    if (r.loaded_elements[m])
      c[std::string("load_bytes_") + isa::mem_id_name(mem)] =
          r.loaded_elements[m] * static_cast<uint64_t>(config_.tile_bytes(mem));
  }
  const uint64_t out_bytes = r.stored_elements * static_cast<uint64_t>(config_.out_tile_bytes());
  if (out_bytes) c["store_bytes_out"] = out_bytes;
  if (r.stored_inp_elements)
    c["store_bytes_inp"] = r.stored_inp_elements * static_cast<uint64_t>(config_.inp_tile_bytes());
  c["dram_read_bytes"] = r.read_beats * static_cast<uint64_t>(config_.bus_bits / 8);
  c["dram_write_bytes"] = out_bytes;
  c["dram_read_bursts"] = r.read_bursts;
  c["dram_write_bursts"] = r.write_bursts;
  // The model's own work: cycles it evaluated one by one (it jumps over the rest).
  c["sim_stepped_cycles"] = r.stepped_cycles;

  if (options_.record_slices || !options_.timeline_path.empty()) {
    for (uint32_t i = 0; i < r.start.size(); ++i) {
      const int engine = static_cast<int>(program.insns[i].engine);
      if (r.start[i] != perf::kNotRun)
        slices_.push_back(
            {engine, i, r.start[i], r.end[i] == perf::kNotRun ? r.start[i] : r.end[i]});
      if (r.unit_start[i] != perf::kNotRun) {
        const int track =
            program.insns[i].kind == perf::Kind::kGemm ? kGemmUnitTrack : kAluUnitTrack;
        slices_.push_back({track, i, r.unit_start[i],
                           r.unit_end[i] == perf::kNotRun ? r.unit_start[i] : r.unit_end[i]});
      }
    }
  }
  if (!options_.timeline_path.empty())
    write_timeline(options_.timeline_path, "perf", slices_, program.decoded,
                   1000.0 / config_.clock_mhz, true, true);
}

std::map<std::string, uint64_t> PerfSim::counters() const {
  return counters_;
}

}  // namespace vacc::sim
