#include "vacc/codegen/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace vacc::codegen::cpu {
namespace {

// True while a thread runs chunks of a parallel loop (workers always).
thread_local bool in_worker = false;

// Workers sleep on a condition variable between jobs; a job is split into contiguous chunks,
// claimed through an atomic counter, so the caller never waits on a slow
// wake-up when it can take the chunks itself.
class Pool {
 public:
  explicit Pool(int n) {
    threads_ = std::max(1, n);
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto &t : workers_) t.join();
  }
  int threads() const { return threads_; }

  void run(int64_t n, const std::function<void(int64_t, int64_t)> &f) {
    if (n <= 0) return;
    // A few chunks per thread, claimed dynamically: a thread descheduled by other work on the
    // machine delays only its current chunk.
    int64_t chunks = std::min<int64_t>(n, threads_ == 1 ? 1 : 4 * threads_);
    if (chunks == 1 || in_worker) {
      f(0, n);
      return;
    }
    std::unique_lock<std::mutex> job_lock(job_mu_);  // one parallel loop at a time
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &f;
      n_ = n;
      chunks_ = chunks;
      next_.store(0);
      done_ = 0;
      ++generation_;
    }
    cv_.notify_all();
    in_worker = true;  // a parallel loop nested in this one runs serially, here too
    work();
    in_worker = false;
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return done_ == chunks_; });
    fn_ = nullptr;
  }

 private:
  void work() {
    int finished = 0;
    for (;;) {
      int64_t c = next_.fetch_add(1);
      if (c >= chunks_) break;
      int64_t begin = n_ * c / chunks_, end = n_ * (c + 1) / chunks_;
      (*fn_)(begin, end);
      ++finished;
    }
    if (finished) {
      std::lock_guard<std::mutex> lock(mu_);
      done_ += finished;
      if (done_ == chunks_) done_cv_.notify_all();
    }
  }
  void loop() {
    in_worker = true;
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work();
    }
  }

  int threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex job_mu_, mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int64_t, int64_t)> *fn_ = nullptr;
  int64_t n_ = 0, chunks_ = 0, done_ = 0;
  std::atomic<int64_t> next_{0};
  uint64_t generation_ = 0;
  bool stop_ = false;
};

int default_threads() {
  int n = static_cast<int>(std::thread::hardware_concurrency());
  if (const char *env = std::getenv("VACC_NUM_THREADS")) n = std::atoi(env);
  return n;
}

std::mutex pool_mu;
Pool *the_pool = nullptr;  // never destroyed: kernels may run during static teardown

Pool &pool() {
  std::lock_guard<std::mutex> lock(pool_mu);
  if (!the_pool) the_pool = new Pool(default_threads());
  return *the_pool;
}

}  // namespace

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)> &f) {
  pool().run(n, f);
}

int num_threads() {
  return pool().threads();
}

void set_num_threads(int n) {
  std::lock_guard<std::mutex> lock(pool_mu);
  if (n <= 0) n = default_threads();
  if (the_pool && the_pool->threads() == std::max(1, n)) return;
  delete the_pool;
  the_pool = new Pool(n);
}

}  // namespace vacc::codegen::cpu

extern "C" void vacc_cpu_parallel_for(void (*fn)(void *, int64_t, int64_t), void *closure,
                                      int64_t n) {
  vacc::codegen::cpu::parallel_for(n, [&](int64_t b, int64_t e) { fn(closure, b, e); });
}
