#include "vacc/cli/tune_session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>

#include "vacc/cli/output.h"
#include "vacc/lower/layer_json.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"
#include "vacc/sweep/mpi_transport.h"
#include "vacc/sweep/tune_pool.h"
#include "vacc/tune/measure.h"
#include "vacc/tune/search_strategy.h"
#include "vacc/tuning/tuning_db.h"

namespace vacc::cli {

std::string tune_progress_line(const tune::TuneReport &r, int64_t total) {
  const int width = 24;
  const int filled = total ? static_cast<int>(width * std::min<int64_t>(r.measured, total) / total)
                           : width;
  std::string bests;
  for (size_t i = 0; i < r.tasks.size() && i < 12; ++i)
    bests += fmt::format(" {:.2f}", r.tasks[i].speedup());
  return fmt::format("[{}{}] {}/{} trials, {:.1f}/s; best/heuristic per task:{}{}",
                     std::string(filled, '#'), std::string(width - filled, '.'), r.measured,
                     total, r.seconds > 0 ? r.measured / r.seconds : 0.0, bests,
                     r.tasks.size() > 12 ? " ..." : "");
}

namespace {

uint64_t weighted(const tune::TaskResult &t, const std::optional<tuning::Trial> &trial) {
  return trial && trial->cycles ? *trial->cycles * static_cast<uint64_t>(t.task.weight) : 0;
}

}  // namespace

TuneSummary run_tune_session(
    const TuneRequest &a, const isa::HwConfig &config,
    const std::function<void(const std::string &heading, int64_t total)> &started,
    const tune::TuneProgress &progress) {
  if (a.model.empty() == a.bench.empty())
    fail("vacc tune: give a model (MODEL.onnx) or --bench resnet18-convs, not both");
  if (!a.bench.empty() && a.bench != "resnet18-convs")
    fail("--bench {}: the benchmark vacc tune knows is resnet18-convs", a.bench);
  if (!a.model.empty() && !path_exists(a.model)) fail("{}: no such model file", a.model);
  if (a.options.trials < 1) fail("--trials {}: tune at least one trial per task", a.options.trials);
  if (a.jobs < 1) fail("-j {}: at least one worker", a.jobs);
  if (a.verify < 0) fail("--verify {}: a count of tasks", a.verify);
  const auto &names = tune::strategy_names();
  if (std::find(names.begin(), names.end(), a.options.strategy) == names.end())
    fail("--strategy '{}': choose random, grid, anneal or model", a.options.strategy);
  if (a.log.empty()) fail("vacc tune: give the tuning log to write (-o LOG)");

  std::vector<tune::TuneTask> tasks;
  if (!a.bench.empty()) {
    tasks = tune::resnet18_conv_tasks(config);
  } else {
    compile::CompileOptions co;
    apply_calibration_options(a.calibration, &co);
    co.batch = a.batch;
    tasks = tune::model_tasks(a.model, config, co);
  }
  if (tasks.empty())
    fail("{}: no layer runs on the accelerator of config '{}': nothing to tune",
         a.model.empty() ? a.bench : a.model, config.name);
  int64_t layers = 0;
  for (const auto &t : tasks) layers += t.weight;
  const int64_t total = a.options.trials * static_cast<int64_t>(tasks.size());
  TuneSummary summary;
  summary.heading = fmt::format(
      "tuning {} workloads ({} accelerator layers) of {} on config '{}' (hardware {}): "
      "strategy {}{}, up to {} trials each, {} worker(s){}, log {}",
      tasks.size(), layers, a.model.empty() ? a.bench : a.model, config.name,
      tuning::hw_key(config), a.options.strategy, a.options.tails ? ", tails" : "",
      a.options.trials, a.jobs,
      a.ranks ? fmt::format(" per rank x {} MPI ranks", a.ranks->ranks()) : "", a.log);
  if (started) started(summary.heading, total);

  tune::TuneOptions options = a.options;
  options.log_path = a.log;
  const int workers = a.jobs * (a.ranks ? a.ranks->ranks() : 1);
  options.batch = std::max<size_t>(options.batch, static_cast<size_t>(workers));
  std::unique_ptr<tune::Measurer> measurer;
  if (workers > 1) {
    measurer = std::make_unique<sweep::PoolMeasurer>(a.jobs, tune_worker_log_dir(a.log),
                                                     a.worker_executable, a.ranks);
  } else {
    measurer = std::make_unique<tune::LocalMeasurer>();
  }
  const tune::TuneReport r = tune::tune(config, tasks, options, *measurer, progress);

  // Verify: the N tasks that gained most, rerun on the RTL; its cycles must equal perf's.
  std::vector<std::string> verified;
  if (a.verify > 0) {
    std::vector<const tune::TaskResult *> order;
    for (const auto &t : r.tasks)
      if (t.best) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto *x, auto *y) {
      return weighted(*x, x->heuristic) - weighted(*x, x->best) >
             weighted(*y, y->heuristic) - weighted(*y, y->best);
    });
    for (size_t i = 0; i < order.size() && static_cast<int>(i) < a.verify; ++i) {
      const tune::TaskResult &t = *order[i];
      const tuning::Trial v = tune::measure(config, t.task.layer, t.best->schedule, "rtl");
      if (!v.cycles || *v.cycles != *t.best->cycles)
        fail("--verify: {} ({}) under {}: perf counted {} cycles, rtl {}", t.task.layers[0],
             t.task.workload, lower::describe(t.best->schedule), *t.best->cycles,
             v.cycles ? std::to_string(*v.cycles) : v.error);
      verified.push_back(t.task.layers[0]);
    }
  }

  if (a.update_db) tuning::update_tuning_db(tuning::read_log(a.log));

  // Totals of programs: the heuristic's (its own forms), and the one compile makes with these
  // bests (whose folding and fusion follow the tuned cycles, so alternative forms may replace
  // the heuristic's).
  uint64_t heuristic_total = 0, tuned_total = 0;
  for (const auto &t : r.tasks)
    if (!t.task.alternative) heuristic_total += weighted(t, t.heuristic);
  std::vector<std::string> choices;
  nlohmann::ordered_json choices_json = nlohmann::ordered_json::array();
  if (a.model.empty()) {
    for (const auto &t : r.tasks) tuned_total += weighted(t, t.best);
  } else {
    compile::CompileOptions co;
    apply_calibration_options(a.calibration, &co);
    co.batch = a.batch;
    co.tuned = r.lookup(a.log);
    const compile::CompiledModel tuned = compile::compile_model(a.model, config, co);
    for (const compile::AccelLayer &l : tuned.accel_layers) {
      const std::optional<lower::TunedSchedule> s = co.tuned(l.layer);
      if (!s)
        fail("{}: layer {} ({}) has no tuned trial", a.model, l.layer.name,
             lower::workload_key(l.layer));
      tuned_total += s->cycles;
    }
    for (const lower::GraphDecision &d : tuned.graph_decisions) {
      if (!d.tuned) continue;
      choices.push_back(fmt::format("{} {} ({} cycles, else {}{})", d.node, d.choice,
                                    d.chosen_cycles, d.other_cycles,
                                    d.heuristic ? "" : "; not the heuristic's choice"));
      choices_json.push_back({{"node", d.node},
                              {"choice", d.choice},
                              {"cycles", d.chosen_cycles},
                              {"other_cycles", d.other_cycles},
                              {"heuristic", d.heuristic}});
    }
  }
  {
    nlohmann::ordered_json &j = summary.json;
    j["config"] = config.name;
    j["hw"] = tuning::hw_key(config);
    j["strategy"] = a.options.strategy;
    j["tails"] = a.options.tails;
    j["log"] = a.log;
    j["seconds"] = r.seconds;
    j["measured"] = r.measured;
    j["trials_per_second"] = r.seconds > 0 ? r.measured / r.seconds : 0;
    j["ranked_per_second"] = r.ranked_per_second;
    j["heuristic_cycles"] = heuristic_total;
    j["tuned_cycles"] = tuned_total;
    j["verified_on_rtl"] = verified;
    if (a.ranks) {
      j["mpi_ranks"] = a.ranks->ranks();
      j["measured_on_other_ranks"] = a.ranks->handed_out();
    }
    nlohmann::ordered_json tj = nlohmann::ordered_json::array();
    for (const auto &t : r.tasks) {
      nlohmann::ordered_json e;
      e["workload"] = t.task.workload;
      e["layers"] = t.task.layers;
      e["space"] = t.space;
      e["candidates"] = t.candidates;
      e["measured"] = t.measured;
      e["resumed"] = t.resumed;
      e["failed"] = t.failed;
      e["heuristic_cycles"] = t.heuristic ? nlohmann::ordered_json(*t.heuristic->cycles) : nullptr;
      e["best_cycles"] = t.best ? nlohmann::ordered_json(*t.best->cycles) : nullptr;
      e["best_at"] = t.best_at;
      e["schedule"] = t.best ? lower::to_json(t.best->schedule) : nlohmann::ordered_json();
      e["alternative"] = t.task.alternative;
      if (t.task.alternative) e["form"] = t.task.form;
      tj.push_back(std::move(e));
    }
    j["tasks"] = std::move(tj);
    j["graph_choices"] = choices_json;
  }
  std::vector<std::vector<std::string>> rows = {{"#", "layers", "workload", "legal", "trials",
                                                 "heuristic", "tuned", "gain", "at", "schedule"}};
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    const auto &t = r.tasks[i];
    const std::string names =
        (t.task.layers.size() > 1 ? fmt::format("{} (x{})", t.task.layers[0], t.task.weight)
                                  : t.task.layers[0]) +
        (t.task.alternative ? " * " + t.task.form : "");
    rows.push_back({std::to_string(i), names, t.task.workload,
                    fmt::format("{}/{}", t.candidates, t.space),
                    std::to_string(t.measured + t.resumed),
                    t.heuristic ? std::to_string(*t.heuristic->cycles) : "-",
                    t.best ? std::to_string(*t.best->cycles) : "-",
                    fmt::format("{:.3f}x", t.speedup()),
                    t.best_at > 0 ? std::to_string(t.best_at) : "-",
                    t.best ? lower::describe(t.best->schedule) : "-"});
  }
  summary.text = "\n" + format_table(rows);
  if (std::any_of(r.tasks.begin(), r.tasks.end(), [](auto &t) { return t.task.alternative; }))
    summary.text +=
        "* a form the heuristic does not choose, named by how it differs from the heuristic's "
        "layer (folding, a pool or add fused or apart): compile takes the form of fewer tuned "
        "cycles\n";
  if (!choices.empty())
    summary.text +=
        fmt::format("folding and fusion by tuned cycles: {}\n", fmt::join(choices, "; "));
  summary.text += fmt::format(
      "total (the heuristic's program; the program compiled with the tuned schedules): heuristic "
      "{} cycles, tuned {} cycles ({:.3f}x); "
      "{} trials measured in {:.1f} s ({:.1f} trials/s{}){}{}\n",
      heuristic_total, tuned_total,
      tuned_total ? double(heuristic_total) / double(tuned_total) : 1.0, r.measured, r.seconds,
      r.seconds > 0 ? r.measured / r.seconds : 0.0,
      r.ranked_per_second > 0
          ? fmt::format(", the cost model ranked {:.0f} candidates/s", r.ranked_per_second)
          : "",
      a.ranks ? fmt::format("; {} of them on the other {} MPI rank(s)", a.ranks->handed_out(),
                            a.ranks->ranks() - 1)
              : "",
      verified.empty() ? ""
                       : fmt::format("; rtl agrees with perf on {}", fmt::join(verified, ", ")));
  if (a.update_db)
    summary.text += fmt::format("the best schedules are in the tuning database ({}); vacc compile/run/bench use "
               "them for config '{}'\n",
               tuning::tuning_db_dir(), config.name);
  return summary;
}

}  // namespace vacc::cli
