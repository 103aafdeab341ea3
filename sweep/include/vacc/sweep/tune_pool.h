// `vacc tune -j N` and a sweep's tuning (spec key `tune`): the tuner's candidates measured in the
// sweep's worker processes (worker_pool.h), one trial per task, so that N of them run at once
// and a candidate that crashes the compiler or the simulator costs its trial, not the run;
// under mpirun, every rank's workers (mpi_transport.h's RankBatches).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vacc/sweep/worker_pool.h"
#include "vacc/tune/tuner.h"

namespace vacc::sweep {

class RankBatches;

class PoolMeasurer : public tune::Measurer {
 public:
  // `workers` processes of `executable` (a vacc command; "" = this one), their logs under
  // `log_dir`; with `ranks` (rank 0 under mpirun), the other MPI ranks' workers measure too.
  PoolMeasurer(int workers, const std::string &log_dir, const std::string &executable = "",
               RankBatches *ranks = nullptr);
  std::vector<tuning::Trial> measure(const isa::HwConfig &config,
                                     const std::vector<Request> &requests) override;

 private:
  WorkerPool pool_;
  RankBatches *ranks_;
};

}  // namespace vacc::sweep
