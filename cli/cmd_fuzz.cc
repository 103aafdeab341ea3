// `vacc fuzz-cosim --config C --seeds N [--start S] [--engine rtl|perf]`: random progen
// programs on fsim and on the RTL, every DRAM byte compared; prints each mismatch (seed, first
// differing address, how to reproduce) and fails when any program differs. With --engine perf
// (any config, no RTL needed) the perf engine instead: its device memory against fsim's and its
// timing model's own counts (MACs, micro-ops, ALU operations, bytes per memory kind) against
// fsim's, which it must equal. With --out-of-range each program has one instruction made to reach
// beyond a scratchpad, and fsim and the RTL must both refuse it, naming that instruction.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "commands.h"
#include "vacc/cli/output.h"
#include "vacc/isa/program.h"
#include "vacc/progen/out_of_range.h"
#include "vacc/progen/progen.h"
#include "vacc/simulator/cosim.h"
#include "vacc/simulator/fsim.h"
#include "vacc/simulator/perf_sim.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/support/error.h"

namespace vacc::cli {
namespace {

// The perf engine against fsim on random programs: memory, and every count both keep.
void fuzz_perf(const isa::HwConfig &config, uint64_t start, uint64_t seeds) {
  const auto t0 = std::chrono::steady_clock::now();
  sim::PerfSim perf(config);
  uint64_t failures = 0, cycles = 0;
  for (uint64_t seed = start; seed < start + seeds; ++seed) {
    const isa::Program p = progen::generate_program(config, seed);
    std::vector<uint8_t> expect = p.dram, got = p.dram;
    sim::Fsim fsim(config);
    fsim.run(expect, p.insn_offset, p.insn_count);
    perf.run(got, p.insn_offset, p.insn_count);
    const auto c = perf.counters();
    cycles += c.at("cycles");
    auto at = [&](const std::string &k) { return c.count(k) ? c.at(k) : uint64_t{0}; };
    const sim::FsimStats &s = fsim.stats();
    std::string what;
    if (got != expect)
      what = "device memory differs from fsim's";
    else if (at("macs") != s.macs)
      what = fmt::format("macs {} vs fsim {}", at("macs"), s.macs);
    else if (at("gemm_uops") != s.gemm_uops)
      what = "GEMM micro-ops differ from fsim's";
    else if (at("alu_ops") != s.alu_ops)
      what = "ALU operations differ from fsim's";
    for (int m = 0; what.empty() && m < isa::kNumMemIds; ++m) {
      const std::string mem = isa::mem_id_name(static_cast<isa::MemId>(m));
      if (at("load_bytes_" + mem) != s.load_bytes[m] ||
          at("store_bytes_" + mem) != s.store_bytes[m])
        what = fmt::format("{} bytes differ from fsim's", mem);
    }
    if (!what.empty()) {
      ++failures;
      fmt::print(
          "MISMATCH {}: {} (reproduce: vacc fuzz-cosim --config {} --engine perf --start {} "
          "--seeds 1)\n",
          progen::describe_program(config, seed), what, config.name, seed);
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print(
      "{} of {} programs on perf match fsim on config '{}' (seeds {}..{}); {} cycles in "
      "{:.1f} s\n",
      seeds - failures, seeds, config.name, start, start + seeds - 1, cycles, s);
  if (failures) fail("{} program(s) differ between perf and fsim", failures);
}

}  // namespace

void add_fuzz_cosim_command(CLI::App &app) {
  auto *cmd = app.add_subcommand("fuzz-cosim", "Compare the RTL with fsim on random programs");
  struct Args {
    std::string config = "default";
    uint64_t seeds = 100, start = 0, cycle_limit = 2'000'000;
    std::string save_dir, engine = "rtl";
    bool no_build = false, out_of_range = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--config", args->config, "Hardware config (YAML path or bundled name)")
      ->capture_default_str();
  cmd->add_option("--seeds", args->seeds, "Number of programs")->capture_default_str();
  cmd->add_option("--start", args->start, "First seed")->capture_default_str();
  cmd->add_option("--cycle-limit", args->cycle_limit, "Deadlock limit per program, in cycles")
      ->capture_default_str();
  cmd->add_option("--engine", args->engine, "Engine compared with fsim: rtl or perf")
      ->capture_default_str();
  cmd->add_option("--save", args->save_dir,
                  "Write each differing program to DIR/seed-N.vprog (for vacc sim --wave)");
  cmd->add_flag("--out-of-range", args->out_of_range,
                "Make one instruction of each program reach beyond a scratchpad: fsim and the "
                "RTL must both refuse it, naming that instruction");
  add_no_build_flag(cmd, &args->no_build);
  cmd->callback([args] {
    const isa::HwConfig config = load_named_config(args->config);
    if (args->engine == "perf") {
      if (args->out_of_range)
        fail("--out-of-range compares the RTL's range checks with fsim's: use --engine rtl");
      return fuzz_perf(config, args->start, args->seeds);
    }
    if (args->engine != "rtl") fail("--engine '{}': choose rtl or perf", args->engine);
    sim::RtlOptions options;
    options.cycle_limit = args->cycle_limit;
    options.build_model = !args->no_build;
    auto rtl = std::make_unique<sim::RtlSim>(config, options);
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t failures = 0, cycles = 0;
    for (uint64_t seed = args->start; seed < args->start + args->seeds; ++seed) {
      const sim::CosimOutcome o = args->out_of_range
                                      ? sim::cosim_out_of_range_seed(config, *rtl, seed)
                                      : sim::cosim_seed(config, *rtl, seed);
      cycles += o.rtl_cycles;
      if (!o.ok) {
        ++failures;
        fmt::print("MISMATCH {}\n", o.message);
        if (!args->save_dir.empty()) {
          std::filesystem::create_directories(args->save_dir);
          const std::string path = fmt::format("{}/seed-{}.vprog", args->save_dir, seed);
          isa::save_program(args->out_of_range ? progen::out_of_range_program(config, seed).program
                                               : progen::generate_program(config, seed),
                            path);
          fmt::print("  saved as {}\n", path);
        }
        rtl = std::make_unique<sim::RtlSim>(config, options);  // a fresh board after an error
      } else if (args->out_of_range) {
        rtl = std::make_unique<sim::RtlSim>(config, options);  // every run ended in an error
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(
        "{} of {} programs {} on config '{}' (seeds {}..{}); {} RTL cycles in {:.1f} s\n",
        args->seeds - failures, args->seeds,
        args->out_of_range ? "refused at the same instruction by fsim and rtl" : "match fsim",
        config.name, args->start, args->start + args->seeds - 1, cycles, s);
    if (failures) fail("{} program(s) differ between rtl and fsim", failures);
  });
}

}  // namespace vacc::cli
