// `vacc`: the command line that ties the parts together. Each subcommand lives in its own
// cmd_*.cc; user errors (vacc::Error) print one "error:" line and exit 1.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>

#include "commands.h"
#include "vacc/support/error.h"

int main(int argc, char **argv) {
  CLI::App app{"vacc: a hardware/software co-design stack for deep-learning accelerators"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print help for every subcommand");
  app.set_version_flag("--version", "vacc " VACC_VERSION);

  vacc::cli::add_config_command(app);
  vacc::cli::add_asm_command(app);
  vacc::cli::add_disasm_command(app);
  vacc::cli::add_sim_command(app);
  vacc::cli::add_bench_command(app);
  vacc::cli::add_hw_command(app);
  vacc::cli::add_fuzz_cosim_command(app);
  vacc::cli::add_fpga_command(app);
  vacc::cli::add_compile_command(app);
  vacc::cli::add_run_command(app);
  vacc::cli::add_eval_command(app);
  vacc::cli::add_calibrate_command(app);
  vacc::cli::add_quant_report_command(app);
  vacc::cli::add_sweep_command(app);
  vacc::cli::add_tune_command(app);
  vacc::cli::add_serve_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  } catch (const vacc::Error &e) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
