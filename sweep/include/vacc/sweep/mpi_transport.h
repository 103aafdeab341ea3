// Scale-out over MPI (Debian's Open MPI): under `mpirun -n N vacc sweep ...` (or Slurm's
// `srun`), rank 0 is the coordinator (it alone opens the results database) and every rank,
// 0 included, runs its own local worker processes. A rank whose worker is idle asks rank 0
// for a task and sends the outcome back, so work is handed out dynamically: a rank that
// finishes asks for more. Open MPI's libraries are loaded (dlopen of libvacc_mpi.so, beside
// the executable) and MPI initialized only when an MPI launcher started the process, so a
// plain `vacc` neither maps them nor pays for MPI_Init.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vacc/sweep/worker_pool.h"

namespace vacc::sweep {

// Whether an MPI launcher (mpirun, mpiexec, srun) started this process.
bool launched_by_mpi();

class MpiSession {
 public:
  MpiSession();   // MPI_Init
  ~MpiSession();  // MPI_Finalize
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ends every rank (rank 0 failed: the others would wait for it forever).
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0, size_ = 1;
};

// Rank 0: `local` (the coordinator's queue) also serves the other ranks; exhausted once it
// is and every other rank has reported its last outcome.
std::unique_ptr<TaskSource> serve_ranks(TaskSource &local, const MpiSession &session);

// Rank 0 of `mpirun vacc tune`: the tuner's batches, one after another, also served to the
// other ranks. A rank that asks while the batch has no task left waits for the next batch (or
// for close()), so the ranks live from the first batch to the last.
class RankBatches {
 public:
  explicit RankBatches(const MpiSession &session);
  RankBatches(const RankBatches &) = delete;
  RankBatches &operator=(const RankBatches &) = delete;
  // `batch` served to this rank's pool and the others'; exhausted once its every task was
  // handed out and every outcome of one another rank ran has come back.
  std::unique_ptr<TaskSource> serve(TaskSource &batch);
  // No more batches: every other rank told so and its goodbye awaited. Not called on an
  // error: rank 0 then aborts every rank (MpiSession::abort).
  void close();
  int ranks() const { return others_ + 1; }
  int64_t handed_out() const { return handed_out_; }  // tasks the other ranks ran, all batches

 private:
  class BatchSource;
  std::vector<int> waiting_;  // ranks whose request for a task is unanswered
  int others_ = 0, goodbyes_ = 0;
  int64_t handed_out_ = 0;
  bool closed_ = false;
};

// Ranks > 0: tasks asked from rank 0, outcomes sent back.
std::unique_ptr<TaskSource> ask_rank0(const MpiSession &session);
// Ranks > 0: tell rank 0 this rank is done (after its pool has drained).
void say_goodbye(const MpiSession &session);
// Ranks > 0, all of it: `workers` processes of `executable` (logs under `log_dir`, named
// `log_prefix`...) run the tasks asked from rank 0 until it has no more; then goodbye.
void work_for_rank0(int workers, const std::string &executable, const std::string &log_dir,
                    const std::string &log_prefix, const MpiSession &session);

}  // namespace vacc::sweep
