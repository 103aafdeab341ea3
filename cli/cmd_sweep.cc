// `vacc sweep SPEC.yaml -o DIR [-j N] [--verify N] [--synth N] [--energy FILE] [--json]`:
// an architecture sweep (sweep/runner.h), and `vacc sweep-worker`, the worker process it
// starts (hidden).
#include <fmt/format.h>

#include "commands.h"
#include "vacc/support/error.h"
#include "vacc/sweep/runner.h"
#include "vacc/sweep/task.h"

namespace vacc::cli {

void add_sweep_command(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "sweep",
      "Sweep architecture parameters: every point of SPEC compiled by the real compiler and "
      "run on perf, with resources, area, energy, Pareto fronts and an HTML report in DIR");
  cmd->footer(
      "SPEC: base (a config name or path), axes (config key: [values] or {from, to, step}), "
      "constraints (e.g. dsp <= 220, fits: xc7z020), workloads (model: X.onnx, or bench: "
      "resnet18-convs). Results: DIR/sweep.db (SQLite; a rerun resumes), DIR/results.csv, "
      "DIR/results.json, DIR/report.html. Under `mpirun -n N` (or srun) the points are shared "
      "among the ranks. See configs/sweeps/ and the README.");
  auto o = std::make_shared<sweep::SweepOptions>();
  cmd->add_option("spec", o->spec_path, "Sweep spec (YAML)")->required();
  cmd->add_option("-o,--output", o->out_dir, "Output directory (results database, exports, report)")
      ->required();
  cmd->add_option("-j,--jobs", o->jobs,
                  "Worker processes (per MPI rank); default: one per core, 1 per rank under MPI")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--verify", o->verify,
                  "Also run N sampled points on the cycle-accurate RTL and report perf's error")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--synth", o->synth,
                  "Synthesize N sampled points with Yosys (cached by config), refit the resource "
                  "model with them and report its error")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--energy", o->energy_table,
                  "Energy table (YAML; default configs/energy/45nm.yaml)");
  cmd->add_option("--area", o->area_table, "Area table (YAML; default configs/area/45nm.yaml)");
  cmd->add_option("--synth-cache", o->synth_cache, "Yosys result cache directory");
  cmd->add_flag("--retry-failed", o->retry_failed,
                "Run again the tasks that failed in an earlier run of this DIR");
  cmd->add_flag("--json", o->json, "One JSON object per line (start, task, finish events)");
  auto no_report = std::make_shared<bool>(false);
  cmd->add_flag("--no-report", *no_report, "Do not write DIR/report.html");
  cmd->callback([o, no_report] {
    o->report = !*no_report;
    const int rc = sweep::run_sweep(*o);
    if (rc) throw CLI::RuntimeError(rc);
  });

  auto *worker = app.add_subcommand("sweep-worker", "");
  worker->group("");  // hidden: started by `vacc sweep`
  auto fds = std::make_shared<std::pair<int, int>>(3, 4);
  worker->add_option("--in-fd", fds->first);
  worker->add_option("--out-fd", fds->second);
  worker->callback([fds] {
    const int rc = sweep::worker_main(fds->first, fds->second);
    if (rc) throw CLI::RuntimeError(rc);
  });
}

}  // namespace vacc::cli
