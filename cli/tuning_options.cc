#include "vacc/cli/tuning_options.h"

#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace vacc::cli {

void add_tuning_options(CLI::App *cmd, TuningArgs *args) {
  cmd->add_option("--tuning-log", args->logs,
                  "Tuned schedules from this `vacc tune` log (repeatable); the best per layer "
                  "workload of it and of the tuning database is used");
  cmd->add_flag("--no-tuning-db", args->no_db,
                "Do not use the per-user tuning database ($VACC_CACHE_DIR/tuning): every layer "
                "without a --tuning-log entry takes the heuristic schedule");
  cmd->add_flag("--program-per-layer", args->program_per_layer,
                "Run every accelerator layer as its own device program, draining the pipeline "
                "between layers (default: one program per run of consecutive accelerator layers, "
                "the next layer's first loads under this layer's last work)");
}

void apply_tuning_options(const TuningArgs &args, compile::CompileOptions *options) {
  for (const std::string &log : args.logs)
    if (!path_exists(log)) fail("--tuning-log {}: no such file (write one with `vacc tune`)", log);
  options->tuning_logs = args.logs;
  options->use_tuning_db = !args.no_db;
  options->program_per_layer = args.program_per_layer;
}

}  // namespace vacc::cli
