// The subcommands of `vacc`, one file each; main.cc adds them in order.
#pragma once

#include <CLI/CLI.hpp>

namespace vacc::cli {

void add_config_command(CLI::App &app);
void add_asm_command(CLI::App &app);
void add_disasm_command(CLI::App &app);
void add_sim_command(CLI::App &app);
void add_bench_command(CLI::App &app);  // `vacc bench resnet18-convs`, `vacc bench model`
void add_bench_model_command(CLI::App &bench);  // cmd_bench_model.cc, under `vacc bench`
void add_hw_command(CLI::App &app);
void add_fuzz_cosim_command(CLI::App &app);
void add_fpga_command(CLI::App &app);  // `vacc devices` and `vacc fpga ...`
void add_compile_command(CLI::App &app);
void add_run_command(CLI::App &app);
void add_eval_command(CLI::App &app);
void add_calibrate_command(CLI::App &app);  // perf against rtl
void add_quant_report_command(CLI::App &app);  // int8 against float, per layer
void add_sweep_command(CLI::App &app);      // `vacc sweep` and its hidden worker
void add_tune_command(CLI::App &app);       // `vacc tune`: schedule search

// --no-build, on every command that can run the rtl engine: never build an RTL model on
// demand (sim::RtlOptions::build_model).
void add_no_build_flag(CLI::App *cmd, bool *no_build);
void add_serve_command(CLI::App &app);      // `vacc serve`: remote runs (remote/)

}  // namespace vacc::cli
