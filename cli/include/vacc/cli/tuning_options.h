// The schedule options of every command that compiles a model (compile, run, bench model): tuned
// schedules from logs (--tuning-log) and from the per-user tuning database, which is consulted
// unless --no-tuning-db; one device program per accelerator layer (--program-per-layer)
// instead of one per run of consecutive accelerator layers.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "vacc/compile/compile_model.h"

namespace vacc::cli {

struct TuningArgs {
  std::vector<std::string> logs;
  bool no_db = false;
  bool program_per_layer = false;
};

void add_tuning_options(CLI::App *cmd, TuningArgs *args);
// Sets the tuning logs and the database switch of `options`; a log that does not exist is a
// vacc::Error naming it.
void apply_tuning_options(const TuningArgs &args, compile::CompileOptions *options);

}  // namespace vacc::cli
