// `vacc tune MODEL.onnx|--bench resnet18-convs --config C -o LOG`: each accelerator workload's
// schedule searched on the perf engine (tune/tuner.h), every trial logged, the best kept in
// the per-user tuning database that compile, run, bench and sweep consult. The run itself is
// vacc/cli/tune_session.h's; this file is its options and what it prints.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "commands.h"
#include "vacc/cli/output.h"
#include "vacc/cli/tune_session.h"
#include "vacc/support/error.h"
#include "vacc/sweep/mpi_transport.h"
#include "vacc/sweep/worker_pool.h"

namespace vacc::cli {
namespace {

struct TuneArgs {
  TuneRequest request;
  std::string config = "default";
  bool json = false, no_db_update = false;
};

// Ranks > 0 under mpirun: this rank's workers measure rank 0's candidates until it is done.
void run_tune_agent(const TuneArgs &a, const sweep::MpiSession &mpi) {
  sweep::work_for_rank0(std::max(1, a.request.jobs),
                        a.request.worker_executable.empty() ? sweep::self_executable()
                                                            : a.request.worker_executable,
                        tune_worker_log_dir(a.request.log), fmt::format("tune-rank{}-", mpi.rank()),
                        mpi);
}

void run_tune_here(const TuneArgs &a, sweep::RankBatches *ranks) {
  TuneRequest r = a.request;
  r.update_db = !a.no_db_update;
  r.ranks = ranks;
  const isa::HwConfig config = load_named_config(a.config);
  const bool tty = isatty(fileno(stdout));
  int64_t total = 0;
  double printed = -1;
  const TuneSummary s = run_tune_session(
      r, config,
      [&](const std::string &heading, int64_t trials) {
        total = trials;
        if (!a.json) fmt::print("{}\n", heading);
      },
      [&](const tune::TuneReport &now) {
        if (a.json) return;
        if (tty) {
          fmt::print("\r{}", tune_progress_line(now, total));
          std::fflush(stdout);
        } else if (now.seconds - printed >= 5) {
          printed = now.seconds;
          fmt::print("{}\n", tune_progress_line(now, total));
        }
      });
  if (a.json) {
    fmt::print("{}\n", s.json.dump(2));
    return;
  }
  if (tty) fmt::print("\n");
  fmt::print("{}", s.text);
}

// Under mpirun (or srun) rank 0 tunes and every rank's workers measure; else one process.
void run_tune(const TuneArgs &a) {
  if (!sweep::launched_by_mpi()) return run_tune_here(a, nullptr);
  sweep::MpiSession mpi;
  if (mpi.rank() != 0) return run_tune_agent(a, mpi);
  try {
    sweep::RankBatches ranks(mpi);
    run_tune_here(a, &ranks);
    ranks.close();
  } catch (const Error &e) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", e.what());
    mpi.abort(1);
  }
}

}  // namespace

void add_tune_command(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "tune",
      "Search each accelerator layer's schedule on the perf engine (the RTL's cycles) and keep "
      "the best in the tuning database");
  cmd->footer(
      "Tasks: the model's accelerator layers grouped by workload (shape and fused stages), or "
      "the ResNet-18 conv layers of `vacc bench resnet18-convs`. Every trial is one JSON line "
      "of LOG; a rerun with the same LOG resumes. Strategies: random, grid, anneal, model (a "
      "learned cost model, XGBoost, ranks the candidates). Under mpirun (or srun) rank 0 tunes "
      "and every rank's -j workers measure.");
  auto a = std::make_shared<TuneArgs>();
  cmd->add_option("model", a->request.model, "ONNX model (.onnx)");
  cmd->add_option("--bench", a->request.bench, "A built-in workload instead of a model: resnet18-convs");
  cmd->add_option("--config", a->config, "Hardware config (YAML path or bundled name)")
      ->capture_default_str();
  cmd->add_option("-o,--output", a->request.log, "Tuning log (JSON lines; resumed when it exists)")
      ->required();
  cmd->add_option("--trials", a->request.options.trials, "Trials per workload")->capture_default_str();
  cmd->add_option("--time-budget", a->request.options.time_budget,
                  "Stop after this many seconds (0: no limit)");
  cmd->add_option("-j,--jobs", a->request.jobs, "Worker processes measuring candidates")
      ->capture_default_str();
  cmd->add_option("--strategy", a->request.options.strategy, "random, grid, anneal or model")
      ->capture_default_str();
  cmd->add_option("--seed", a->request.options.seed, "Seed of the random choices")->capture_default_str();
  cmd->add_flag("--tails", a->request.options.tails,
                "Also search tile sizes that do not divide their axes (a tail tile at the end): "
                "a larger space, for larger budgets");
  cmd->add_option("--verify", a->request.verify,
                  "Rerun the best schedules of the N workloads that gained most on the RTL and "
                  "require its cycles to equal perf's");
  add_calibration_options(cmd, &a->request.calibration, ".onnx models: ");
  cmd->add_option("--batch", a->request.batch, "Value of the model's batch dimension")
      ->capture_default_str();
  cmd->add_flag("--no-db-update", a->no_db_update,
                "Leave the tuning database as it is (the log still holds every trial)");
  cmd->add_flag("--json", a->json, "Print the result as JSON");
  cmd->callback([a] { run_tune(*a); });
}

}  // namespace vacc::cli
