// `vacc fuzz-cosim --config C --seeds N [--start S]`: random progen programs on fsim and on
// the RTL, every DRAM byte compared; prints each mismatch (seed, first differing address, how
// to reproduce) and fails when any program differs.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "commands.h"
#include "output.h"
#include "vacc/isa/program.h"
#include "vacc/progen/progen.h"
#include "vacc/simulator/cosim.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/support/error.h"

namespace vacc::cli {

void add_fuzz_cosim_command(CLI::App &app) {
  auto *cmd = app.add_subcommand("fuzz-cosim", "Compare the RTL with fsim on random programs");
  struct Args {
    std::string config = "default";
    uint64_t seeds = 100, start = 0, cycle_limit = 2'000'000;
    std::string save_dir;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--config", args->config, "Hardware config (YAML path or bundled name)")
      ->capture_default_str();
  cmd->add_option("--seeds", args->seeds, "Number of programs")->capture_default_str();
  cmd->add_option("--start", args->start, "First seed")->capture_default_str();
  cmd->add_option("--cycle-limit", args->cycle_limit, "Deadlock limit per program, in cycles")
      ->capture_default_str();
  cmd->add_option("--save", args->save_dir,
                  "Write each differing program to DIR/seed-N.vprog (for vacc sim --wave)");
  cmd->callback([args] {
    const isa::HwConfig config = load_named_config(args->config);
    sim::RtlOptions options;
    options.cycle_limit = args->cycle_limit;
    auto rtl = std::make_unique<sim::RtlSim>(config, options);
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t failures = 0, cycles = 0;
    for (uint64_t seed = args->start; seed < args->start + args->seeds; ++seed) {
      const sim::CosimOutcome o = sim::cosim_seed(config, *rtl, seed);
      cycles += o.rtl_cycles;
      if (!o.ok) {
        ++failures;
        fmt::print("MISMATCH {}\n", o.message);
        if (!args->save_dir.empty()) {
          std::filesystem::create_directories(args->save_dir);
          const std::string path = fmt::format("{}/seed-{}.vprog", args->save_dir, seed);
          isa::save_program(progen::generate_program(config, seed), path);
          fmt::print("  saved as {}\n", path);
        }
        rtl = std::make_unique<sim::RtlSim>(config, options);  // a fresh board after an error
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(
        "{} of {} programs match fsim on config '{}' (seeds {}..{}); {} RTL cycles in "
        "{:.1f} s\n",
        args->seeds - failures, args->seeds, config.name, args->start,
        args->start + args->seeds - 1, cycles, s);
    if (failures) fail("{} program(s) differ between rtl and fsim", failures);
  });
}

}  // namespace vacc::cli
