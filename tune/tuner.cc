#include "vacc/tune/tuner.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "vacc/support/error.h"
#include "vacc/tune/candidates.h"
#include "vacc/tune/features.h"
#include "vacc/tune/measure.h"
#include "vacc/tune/search_strategy.h"

namespace vacc::tune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A task being tuned: its candidates, features, strategy and what was measured.
struct TaskState {
  Candidates candidates;
  std::vector<std::vector<float>> features;
  std::unique_ptr<SearchStrategy> strategy;
  std::vector<std::pair<size_t, uint64_t>> measured;  // (candidate, cycles), for the model
  int64_t trials = 0;                                 // resumed + measured, failures included
};

void record(TaskResult &r, TaskState &st, const tuning::Trial &t, std::optional<size_t> position) {
  ++st.trials;
  if (!t.ok()) {
    ++r.failed;
  } else {
    if (position) st.measured.push_back({*position, *t.cycles});
    if (t.heuristic) r.heuristic = t;
    if (!r.best || *t.cycles < *r.best->cycles) {
      r.best = t;
      r.best_at = st.trials;
    }
  }
  if (position) st.strategy->observe(*position, t.cycles);
}

}  // namespace

std::vector<tuning::Trial> LocalMeasurer::measure(const isa::HwConfig &config,
                                                  const std::vector<Request> &requests) {
  std::vector<tuning::Trial> out;
  for (const auto &[layer, schedule] : requests)
    out.push_back(tune::measure(config, *layer, schedule));
  return out;
}

TuneReport tune(const isa::HwConfig &config, const std::vector<TuneTask> &tasks,
                const TuneOptions &options, Measurer &measurer, const TuneProgress &progress) {
  const auto start = Clock::now();
  if (options.trials < 1) fail("--trials {}: tune at least one trial per task", options.trials);
  const std::string hw = tuning::hw_key(config);
  TuneReport report;
  // One cost model per operator (conv2d, dense, pool2d, add), shared by its tasks: schedules
  // of one operator transfer between workloads, while another operator's features (a pool's
  // or an add's tiles) mean other costs and would only blur the ranking.
  std::map<size_t, std::unique_ptr<CostModel>> models;  // by LayerParams alternative
  std::vector<CostModel *> model_of(tasks.size());
  const bool use_model = options.strategy == "model";
  std::vector<TaskState> states(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    TaskState &st = states[i];
    std::unique_ptr<CostModel> &m = models[tasks[i].layer.params.index()];
    if (!m) m = std::make_unique<CostModel>();
    model_of[i] = m.get();
    st.candidates = enumerate_candidates(config, tasks[i].layer, options.vthreads, options.tails);
    if (use_model)
      for (size_t p = 0; p < st.candidates.size(); ++p)
        st.features.push_back(
            schedule_features(config, tasks[i].layer, st.candidates.schedule(p)));
    st.strategy =
        make_strategy(options.strategy, st.candidates, options.seed + i, &st.features, model_of[i]);
    TaskResult r;
    r.task = tasks[i];
    r.space = st.candidates.space.size();
    r.candidates = st.candidates.size();
    report.tasks.push_back(std::move(r));
  }

  // Resume: the log's trials of this hardware, by workload.
  std::map<std::string, size_t> by_workload;
  for (size_t i = 0; i < tasks.size(); ++i) by_workload.emplace(tasks[i].workload, i);
  std::error_code ec;
  if (!options.log_path.empty() && std::filesystem::exists(options.log_path, ec)) {
    for (const tuning::Trial &t : tuning::read_log(options.log_path)) {
      if (t.hw != hw) continue;
      const auto it = by_workload.find(t.workload);
      if (it == by_workload.end()) continue;
      TaskState &st = states[it->second];
      std::optional<size_t> position;
      if (const std::optional<uint64_t> index = st.candidates.space.find(t.schedule)) {
        const auto p = st.candidates.position.find(*index);
        if (p != st.candidates.position.end()) position = p->second;
      }
      ++report.tasks[it->second].resumed;
      record(report.tasks[it->second], st, t, position);
    }
  }
  std::ofstream log;
  if (!options.log_path.empty()) {
    log.open(options.log_path, std::ios::app);
    if (!log) fail("{}: cannot write the tuning log", options.log_path);
  }

  auto retrain = [&] {
    for (auto &[op, model] : models) {
      std::vector<std::vector<float>> x;
      std::vector<float> y;
      for (size_t i = 0; i < tasks.size(); ++i) {
        const TaskState &st = states[i];
        if (model_of[i] != model.get() || st.measured.empty()) continue;
        uint64_t best = st.measured[0].second;
        for (const auto &[p, c] : st.measured) best = std::min(best, c);
        for (const auto &[p, c] : st.measured) {
          x.push_back(st.features[p]);
          y.push_back(static_cast<float>(std::log2(double(c) / double(best))));
        }
      }
      if (x.size() >= 8) model->fit(x, y);
    }
  };
  if (use_model) retrain();

  double ranked = 0, ranking_seconds = 0;
  for (;;) {
    if (options.time_budget > 0 && seconds_since(start) >= options.time_budget) break;
    std::vector<Measurer::Request> requests;
    std::vector<std::pair<size_t, size_t>> owner;  // (task, candidate) per request
    for (size_t i = 0; i < tasks.size(); ++i) {
      TaskState &st = states[i];
      const int64_t left = options.trials - st.trials;
      if (left <= 0 || report.tasks[i].exhausted) continue;
      const auto t0 = Clock::now();
      const std::vector<size_t> next =
          st.strategy->propose(std::min<size_t>(options.batch, static_cast<size_t>(left)));
      if (use_model && model_of[i]->trained()) {
        ranking_seconds += seconds_since(t0);
        ranked += double(st.candidates.size() - static_cast<size_t>(st.trials));
      }
      if (next.empty()) report.tasks[i].exhausted = true;
      for (size_t p : next) {
        requests.push_back({&tasks[i].layer, st.candidates.schedule(p)});
        owner.push_back({i, p});
      }
    }
    if (requests.empty()) break;
    const std::vector<tuning::Trial> trials = measurer.measure(config, requests);
    VACC_CHECK(trials.size() == requests.size()) << "one trial per request";
    for (size_t k = 0; k < trials.size(); ++k) {
      const auto [i, p] = owner[k];
      tuning::Trial t = trials[k];
      t.hw = hw;
      t.config = config.name;
      t.strategy = options.strategy;
      t.heuristic = states[i].candidates.heuristic == p;
      t.trial = states[i].trials;
      ++report.tasks[i].measured;
      ++report.measured;
      record(report.tasks[i], states[i], t, p);
      if (log.is_open()) tuning::append_trial(log, t);
      report.trials.push_back(std::move(t));
    }
    if (use_model) retrain();
    report.seconds = seconds_since(start);
    if (progress) progress(report);
  }
  report.seconds = seconds_since(start);
  report.ranked_per_second = ranking_seconds > 0 ? ranked / ranking_seconds : 0;
  return report;
}

lower::TunedLookup TuneReport::lookup(const std::string &source) const {
  std::map<std::string, tuning::Trial> best;
  for (const TaskResult &t : tasks)
    if (t.best) best.emplace(t.task.workload, *t.best);
  return [best = std::move(best),
          source](const lower::Layer &layer) -> std::optional<lower::TunedSchedule> {
    const auto it = best.find(lower::workload_key(layer));
    if (it == best.end()) return std::nullopt;
    return lower::TunedSchedule{it->second.schedule, source, *it->second.cycles};
  };
}

}  // namespace vacc::tune
