// `vacc sweep SPEC -o DIR`: the whole sweep in one place. Reads and checks the spec and its
// workloads' files, expands the points (invalid ones listed with the rule they break),
// estimates each point's resources and area and applies the constraints, opens DIR/sweep.db
// (refusing one that holds another spec's results), queues a perf run per (point, workload)
// plus the --synth and --verify samples, runs them on local worker processes (and on other
// MPI ranks when started by mpirun or srun), then derives the results, Pareto fronts and
// exports (finalize.h). A rerun skips what is done.
#pragma once

#include <string>

#include "vacc/sweep/finalize.h"

namespace vacc::sweep {

struct SweepOptions {
  std::string spec_path;
  // The spec's text, in place of reading spec_path (the Python module's dict); spec_path then
  // only names it, and its directory (relative paths: the current one) anchors its paths.
  std::string spec_text;
  // The `vacc` executable whose hidden `sweep-worker` command runs each task; "" = this
  // process's own executable (the `vacc` command itself).
  std::string worker_executable;
  std::string out_dir;
  int jobs = 0;    // worker processes on this machine (this rank); 0: one per core (1 per rank)
  int verify = 0;  // points to also run on rtl
  int synth = 0;   // points to synthesize with Yosys
  std::string energy_table;   // "" = configs/energy/45nm.yaml
  std::string area_table;     // "" = configs/area/45nm.yaml
  std::string synth_cache;    // "" = hw::default_cache_dir()
  bool retry_failed = false;  // failed tasks of an earlier run go back in the queue
  bool json = false;
  bool report = true;
};

// Returns the process exit status; user errors throw vacc::Error. The coordinator (rank 0)
// fills `summary`, when given, with the finishing summary and every result row.
int run_sweep(const SweepOptions &options, SweepSummary *summary = nullptr);

}  // namespace vacc::sweep
