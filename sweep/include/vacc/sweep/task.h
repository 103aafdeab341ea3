// A unit of sweep work and its outcome, as they travel between the coordinator, worker
// processes (one JSON line each way) and MPI ranks: run a workload on perf, verify it on rtl,
// or synthesize a point with Yosys. run_task() is what a worker does with one.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vacc/sweep/store.h"

namespace vacc::sweep {

struct Task {
  TaskKey key;
  std::string config_yaml;  // the point's config
  std::string config_name;
  nlohmann::json workload;  // evaluate.h's to_json(Workload); null for synth
  std::string base_dir;     // workload paths are relative to it
  std::string synth_cache;  // synth: Yosys cache directory ("" = the default)
};

struct TaskOutcome {
  TaskKey key;
  bool ok = false;
  std::string message;  // the error when not ok
  nlohmann::json result;
  double seconds = 0;
};

nlohmann::json to_json(const Task &t);
Task task_from_json(const nlohmann::json &j);
nlohmann::json to_json(const TaskOutcome &o);
TaskOutcome outcome_from_json(const nlohmann::json &j);

// Runs one task in this process; a vacc::Error (or any exception) becomes a failed outcome
// carrying its message.
TaskOutcome run_task(const Task &task);

// The worker process: reads tasks (JSON lines) from `in_fd`, runs each, writes outcomes
// (JSON lines) to `out_fd`, until `in_fd` closes. Returns the exit status.
int worker_main(int in_fd, int out_fd);

}  // namespace vacc::sweep
