#include "vacc/codegen/cpu/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace vacc::codegen::cpu {
namespace {

using Fn = std::function<void(int64_t, int64_t)>;

// The most chunks of one loop: the count and the next chunk are 16-bit fields of Pool::state_.
constexpr int64_t kMaxChunks = 0xffff;

// True while a thread runs chunks of a parallel loop (workers always).
thread_local bool in_worker = false;

// How long a thread spins before it sleeps: a worker after its last chunk, waiting for the next
// loop, and the caller after its chunks, waiting for the workers'. A whole model's steps follow
// each other within microseconds, and waking a sleeping thread costs tens of microseconds (on
// a virtual machine, the halted CPU's wake-up too): as long as many of its steps take, so that
// a pool that slept between steps ran them on the caller alone.
constexpr auto kSpin = std::chrono::microseconds(300);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() or kSpin has passed; returns done(). A thread that `yields` offers its
// core to any other runnable thread every few microseconds (a system call that returns at once
// on an idle core): a waiting worker must not take a loaded machine's core from the threads
// that have work, the caller's among them. The caller does not yield while it waits for the
// workers' last chunks: it would get its core back only at the next scheduler tick.
template <typename Done>
bool spin_until(const Done &done, bool yield) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
    if (yield) sched_yield();
  }
}

// parallel_chunk_bounds, into `bounds` (whose memory a pool reuses from loop to loop).
void chunk_bounds(int64_t n, int threads, std::vector<int64_t> &bounds) {
  bounds.assign(1, 0);
  if (n <= 0) return;
  if (threads <= 1) {
    bounds.push_back(n);
    return;
  }
  // Guided: each chunk a quarter of what is left per thread, so chunks shrink to single
  // iterations at the end and the threads finish within about one iteration of each other
  // (equal chunks, a few per thread, left up to a chunk's difference: a quarter of a thread's
  // share), while a long loop of short iterations takes few claims. A thread descheduled by
  // other work on the machine delays only its chunk.
  const int64_t share = 4 * int64_t{threads};
  for (int64_t done = 0; done < n;) {
    done += std::max<int64_t>(1, (n - done + share - 1) / share);
    bounds.push_back(done);
  }
  if (static_cast<int64_t>(bounds.size()) - 1 > kMaxChunks) {
    bounds.assign(1, 0);
    for (int64_t c = 1; c <= share; ++c) bounds.push_back(n * c / share);
  }
}

// A job is split into contiguous chunks (chunk_bounds), claimed in order through one atomic word
// that holds the job's epoch, its number of chunks and its next chunk, so that a worker late for
// a job can never claim a chunk of the next one (nor run past its own job's chunks); the caller
// claims chunks too, and never waits for a worker that claimed none (a worker late to wake
// leaves its share to the caller). Workers spin between jobs for kSpin, then sleep on a condition
// variable; the caller notifies only when one sleeps.
class Pool {
 public:
  explicit Pool(int n) {
    threads_ = std::max(1, n);
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
    }
    wake_cv_.notify_all();
    for (auto &t : workers_) t.join();
  }
  int threads() const { return threads_; }

  void run(int64_t n, const Fn &f) {
    if (n <= 0) return;
    if (threads_ == 1 || n == 1 || in_worker) {
      f(0, n);
      return;
    }
    std::lock_guard<std::mutex> job_lock(job_mu_);  // one parallel loop at a time
    // The job's fields: workers read them only after claiming one of its chunks, which keeps
    // the job unfinished, so the next job cannot have replaced them.
    fn_ = &f;
    chunk_bounds(n, threads_, bounds_);
    const int64_t chunks = static_cast<int64_t>(bounds_.size()) - 1;
    pending_.store(chunks, std::memory_order_relaxed);
    const uint32_t epoch = epoch_of(state_.load(std::memory_order_relaxed)) + 1;
    // Publishes the job (sequentially consistent: see sleepers_).
    state_.store(uint64_t{epoch} << 32 | static_cast<uint64_t>(chunks) << 16);
    if (sleepers_.load() > 0) {
      { std::lock_guard<std::mutex> lock(mu_); }
      wake_cv_.notify_all();
    }
    in_worker = true;  // a parallel loop nested in this one runs serially, here too
    work(epoch);
    in_worker = false;
    if (!spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; }, false)) {
      std::unique_lock<std::mutex> lock(mu_);
      caller_waits_.store(true);
      done_cv_.wait(lock, [&] { return pending_.load() == 0; });
      caller_waits_.store(false);
    }
  }

 private:
  // state_: epoch << 32 | chunks << 16 | next chunk.
  static uint32_t epoch_of(uint64_t state) { return static_cast<uint32_t>(state >> 32); }

  // Runs chunks of job `epoch` until none is left to claim.
  void work(uint32_t epoch) {
    for (;;) {
      uint64_t s = state_.load(std::memory_order_acquire);
      if (epoch_of(s) != epoch) return;
      const int64_t c = s & kMaxChunks, chunks = s >> 16 & kMaxChunks;
      if (c >= chunks) return;
      if (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) continue;
      (*fn_)(bounds_[c], bounds_[c + 1]);
      if (pending_.fetch_sub(1) == 1 && caller_waits_.load()) {
        { std::lock_guard<std::mutex> lock(mu_); }
        done_cv_.notify_one();
      }
    }
  }

  void loop() {
    in_worker = true;
    uint32_t seen = 0;
    auto news = [&] { return stop_.load() || epoch_of(state_.load()) != seen; };
    for (;;) {
      if (!spin_until(news, true)) {
        std::unique_lock<std::mutex> lock(mu_);
        sleepers_.fetch_add(1);
        wake_cv_.wait(lock, news);
        sleepers_.fetch_sub(1);
      }
      if (stop_.load()) return;
      seen = epoch_of(state_.load(std::memory_order_acquire));
      work(seen);
    }
  }

  int threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex job_mu_, mu_;
  std::condition_variable wake_cv_, done_cv_;
  // The job: written by the caller before it publishes the epoch in state_.
  const Fn *fn_ = nullptr;
  std::vector<int64_t> bounds_;  // chunk c is [bounds_[c], bounds_[c + 1])
  std::atomic<uint64_t> state_{0};
  std::atomic<int64_t> pending_{0};  // chunks not yet finished
  // Sleeping workers and a sleeping caller: each side writes its flag and reads the other's
  // word in sequentially consistent order, so that one of them always sees the other.
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_waits_{false}, stop_{false};
};

// The CPUs this process may run on (taskset, cgroups), not all the machine's: a thread per CPU
// it cannot use would spin against the caller.
int default_threads() {
  int n = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
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

std::vector<int64_t> parallel_chunk_bounds(int64_t n, int threads) {
  std::vector<int64_t> bounds;
  chunk_bounds(n, threads, bounds);
  return bounds;
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
