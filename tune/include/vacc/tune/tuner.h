// `vacc tune`: searches each task's schedule space on the perf engine (cycles only, exact
// against the RTL), a round at a time: every unfinished task's strategy proposes a batch of
// candidates, a Measurer measures them all (in worker processes when -j > 1), each trial is
// appended to the log, and the model strategy's cost model is retrained on every trial so far.
// A log that exists is resumed: its trials of this hardware count towards each task's budget
// and are not measured again.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/tune/task.h"
#include "vacc/tuning/trial.h"

namespace vacc::tune {

struct TuneOptions {
  int64_t trials = 200;      // per task, the heuristic's and resumed ones included
  double time_budget = 0;    // seconds for the whole run; 0: none
  std::string strategy = "model";
  uint64_t seed = 1;
  int vthreads = 2;          // the heuristic's (default_schedule's) threads
  size_t batch = 8;          // candidates per task per round
  // Tile sizes that do not divide their axes (tails) in the searched space: up to 6x more points,
  // which pay on some layers but dilute a small budget of trials (bench/RESULTS.md, "Tails").
  bool tails = false;
  std::string log_path;      // "" = no log
};

// Measures candidates: in this process, or in worker processes.
class Measurer {
 public:
  using Request = std::pair<const lower::Layer *, lower::AccelSchedule>;
  virtual ~Measurer() = default;
  // One trial per request, in order.
  virtual std::vector<tuning::Trial> measure(const isa::HwConfig &config,
                                             const std::vector<Request> &requests) = 0;
};

// One at a time, on a perf device of this process.
class LocalMeasurer : public Measurer {
 public:
  std::vector<tuning::Trial> measure(const isa::HwConfig &config,
                                     const std::vector<Request> &requests) override;
};

struct TaskResult {
  TuneTask task;
  uint64_t space = 0, candidates = 0;  // points of the space; of them legal
  std::optional<tuning::Trial> heuristic, best;
  int64_t measured = 0, resumed = 0, failed = 0;
  int64_t best_at = -1;  // the number of trials it took to find the best (1-based)
  bool exhausted = false;  // every candidate measured
  double speedup() const {
    return heuristic && best ? double(*heuristic->cycles) / double(*best->cycles) : 1;
  }
};

struct TuneReport {
  std::vector<TaskResult> tasks;
  double seconds = 0;
  int64_t measured = 0;
  double ranked_per_second = 0;  // model strategy: candidates the cost model ranked per second
  std::vector<tuning::Trial> trials;  // this run's, in order

  // The tasks' bests as a compile's tuned schedules (CompileOptions::tuned), from `source`.
  lower::TunedLookup lookup(const std::string &source) const;
};

// Progress after each round (a task's best so far, trials done).
using TuneProgress = std::function<void(const TuneReport &)>;

TuneReport tune(const isa::HwConfig &config, const std::vector<TuneTask> &tasks,
                const TuneOptions &options, Measurer &measurer,
                const TuneProgress &progress = {});

}  // namespace vacc::tune
