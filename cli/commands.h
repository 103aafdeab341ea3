// The subcommands of `vacc`, one file each; main.cc adds them in order.
#pragma once

#include <CLI/CLI.hpp>

namespace vacc::cli {

void add_config_command(CLI::App &app);
void add_asm_command(CLI::App &app);
void add_disasm_command(CLI::App &app);
void add_sim_command(CLI::App &app);

}  // namespace vacc::cli
