// bench_rtl_speed: how fast the cycle-accurate simulator runs (simulated cycles per wall
// second on one core) and how busy the RTL keeps its GEMM core, for one config.
//   bench_rtl_speed [config=default] [gemms=400] [only=WORKLOAD-SUBSTRING]
// Workloads: a long GEMM stream over resident operands (progen::make_gemm_stream) and
// load/compute/store pipelines, double-buffered and serialized (progen::make_pipeline_program).
// The GEMM stream's rate (CPU time of one core) is printed against issue 27's target.
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <string>

#include "vacc/isa/config.h"
#include "vacc/progen/workloads.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/support/error.h"

namespace {

// Simulated cycles per second of one core that the default config's GEMM stream should reach.
constexpr double kTargetCyclesPerSecond = 2e6;

std::string g_only;  // run only the workloads whose name contains this

// CPU time of this process: what one core spent, whatever else shares the machine (wall time
// is printed too; the two agree on an idle machine).
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Measured {
  uint64_t cycles = 0;          // 0: not run (filtered out)
  double cycles_per_cpu_s = 0;  // simulated cycles per second of this process's CPU time
};

// Runs `program` once on a fresh simulator; prints and returns its RTL cycle count and rate.
Measured measure(const vacc::isa::HwConfig &config, const std::string &what,
                 const vacc::isa::Program &program) {
  if (what.find(g_only) == std::string::npos) return {};
  vacc::sim::RtlSim sim(config);
  std::vector<uint8_t> dram = program.dram;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  sim.run(dram, program.insn_offset, program.insn_count);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  const auto c = sim.counters();
  const double cycles = static_cast<double>(c.at("cycles"));
  fmt::print(
      "{:<28} {:>8} RTL cycles  wall {:6.3f} s {:5.2f} M cycles/s  cpu {:6.3f} s {:5.2f} M "
      "cycles/s  gemm_busy/compute_busy {:5.1f}%  compute_busy/cycles {:5.1f}%\n",
      what, c.at("cycles"), s, cycles / s / 1e6, cpu, cycles / cpu / 1e6,
      100.0 * static_cast<double>(c.at("gemm_busy")) /
          static_cast<double>(std::max<uint64_t>(1, c.at("compute_busy"))),
      100.0 * static_cast<double>(c.at("compute_busy")) / std::max(1.0, cycles));
  return {c.at("cycles"), cycles / cpu};
}

}  // namespace

int main(int argc, char **argv) {
  try {
    const std::string name = argc > 1 ? argv[1] : "default";
    const int gemms = argc > 2 ? std::stoi(argv[2]) : 400;
    g_only = argc > 3 ? argv[3] : "";
    const vacc::isa::HwConfig config = vacc::isa::load_config(vacc::isa::resolve_config_path(name));
    fmt::print("rtl simulator on config '{}'\n", config.name);
    const Measured stream = measure(config, fmt::format("gemm stream ({}x256 uops)", gemms),
                                    vacc::progen::make_gemm_stream(config, gemms, 256));
    if (stream.cycles && config.name == "default")
      fmt::print(
          "gemm stream: {:.2f} M cycles/s of CPU time against the target of {:.0f} M "
          "(issue 27, the default config, one core): {}\n",
          stream.cycles_per_cpu_s / 1e6, kTargetCyclesPerSecond / 1e6,
          stream.cycles_per_cpu_s >= kTargetCyclesPerSecond ? "met" : "not met");
    measure(config, "pipeline double-buffered",
            vacc::progen::make_pipeline_program(config, 16, 8, true));
    measure(config, "pipeline serialized",
            vacc::progen::make_pipeline_program(config, 16, 8, false));
    // The workload of tests/rtl RtlPerf.DoubleBufferedPipelineBeatsItsSerializedTwin: more
    // compute per byte loaded (each GEMM 4 times), so that overlap shows.
    const uint64_t db = measure(config, "pipeline x4 double-buffered",
                                vacc::progen::make_pipeline_program(config, 8, 8, true, 4))
                            .cycles;
    const uint64_t serial = measure(config, "pipeline x4 serialized",
                                    vacc::progen::make_pipeline_program(config, 8, 8, false, 4))
                                .cycles;
    if (db && serial)
      fmt::print("double-buffered / serialized cycles: {:.3f}\n",
                 static_cast<double>(db) / static_cast<double>(serial));
  } catch (const vacc::Error &e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
