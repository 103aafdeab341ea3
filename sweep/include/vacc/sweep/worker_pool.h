// Local worker processes: each is `vacc sweep-worker` (this executable again), fed one task
// at a time through a pipe and answering through another, its stdout and stderr going to a
// log file. Processes rather than threads, so that a point that crashes the compiler or a
// simulator (an internal error aborts) costs that task, recorded with the exit signal and the
// log's last lines, and not the sweep; the pool starts a new worker in its place.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vacc/sweep/task.h"

namespace vacc::sweep {

// Where tasks come from and outcomes go: the coordinator's queue, or an MPI rank's requests to
// rank 0. The pool calls it from one thread.
class TaskSource {
 public:
  virtual ~TaskSource() = default;
  // A task for an idle worker, or nullopt when none is available now.
  virtual std::optional<Task> next() = 0;
  virtual void done(const TaskOutcome &outcome) = 0;
  // True once no more tasks will come (the pool then drains and returns).
  virtual bool exhausted() = 0;
  // Called between waits (at least every few milliseconds): serve remote ranks, print progress.
  virtual void poll() {}
};

class WorkerPool {
 public:
  // `workers` processes of `executable` (absolute path), logs under `log_dir`.
  WorkerPool(int workers, std::string executable, std::string log_dir, std::string log_prefix);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  // Hands tasks to idle workers until the source is exhausted and every worker is idle.
  void run(TaskSource &source);

 private:
  struct Worker;
  void start(Worker &w);
  void stop(Worker &w);
  TaskOutcome crashed(Worker &w);

  std::vector<Worker> workers_;
  std::string executable_, log_dir_, log_prefix_;
};

// The absolute path of the running executable (for starting workers).
std::string self_executable();

}  // namespace vacc::sweep
