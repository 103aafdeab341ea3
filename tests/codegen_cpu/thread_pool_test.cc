// The CPU backend's thread pool (codegen/cpu/thread_pool.h): every index of every loop runs
// exactly once whatever the pool's size, loops follow each other with workers awake (spinning)
// or asleep, callers on several threads take turns, and the default size is the CPUs the
// process may run on.
#include "vacc/codegen/cpu/thread_pool.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace vacc {
namespace {

using codegen::cpu::parallel_for;
using codegen::cpu::set_num_threads;

// Restores the default pool when a test ends.
struct PoolSize {
  explicit PoolSize(int n) { set_num_threads(n); }
  ~PoolSize() { set_num_threads(0); }
};

// Runs a loop of n and checks that each index ran once, and that what the chunks wrote is seen
// by the caller when parallel_for returns.
void expect_each_index_once(int64_t n) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::vector<int64_t> written(static_cast<size_t>(n), -1);
  parallel_for(n, [&](int64_t b, int64_t e) {
    ASSERT_LE(0, b);
    ASSERT_LT(b, e);
    ASSERT_LE(e, n);
    for (int64_t i = b; i < e; ++i) {
      hits[i].fetch_add(1);
      written[i] = i * 7;
    }
  });
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n;
    ASSERT_EQ(written[i], i * 7) << "index " << i << " of " << n;
  }
}

// Thousands of loops back to back, of every size from 1 to 40 (fewer, as many and more
// iterations than chunks): the workers are always awake, and a worker late for one loop
// must not take a chunk of the next.
TEST(CpuThreadPool, LoopsBackToBackRunEachIndexOnce) {
  for (int threads : {2, 3}) {
    PoolSize pool(threads);
    EXPECT_EQ(codegen::cpu::num_threads(), threads);
    for (int round = 0; round < 100; ++round)
      for (int64_t n = 1; n <= 40; ++n) expect_each_index_once(n);
    expect_each_index_once(100001);
  }
}

// Loops further apart than the workers spin: they have gone to sleep and must be woken, and a
// worker takes part (two chunks that each sleep run on two threads at least once).
TEST(CpuThreadPool, SleepingWorkersWakeForTheNextLoop) {
  PoolSize pool(2);
  int both = 0;
  for (int round = 0; round < 20 && both == 0; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    expect_each_index_once(17);
    std::mutex mu;
    std::set<std::thread::id> ids;
    parallel_for(2, [&](int64_t, int64_t) {
      {
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
    both += ids.size() == 2;
  }
  EXPECT_GT(both, 0) << "no worker took a chunk in 20 loops";
}

// Two threads start loops on one pool at once: the loops take turns, each complete.
TEST(CpuThreadPool, CallersOnSeveralThreadsTakeTurns) {
  PoolSize pool(2);
  std::atomic<int> failures{0};
  auto caller = [&] {
    for (int round = 0; round < 300; ++round) {
      const int64_t n = 1 + round % 29;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      parallel_for(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
      });
      for (auto &h : hits) failures += h.load() != 1;
    }
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
}

// Without VACC_NUM_THREADS, one thread per CPU of the process's affinity mask (taskset), not
// per CPU of the machine.
TEST(CpuThreadPool, DefaultSizeIsTheCpusThisProcessMayUse) {
  if (std::getenv("VACC_NUM_THREADS")) GTEST_SKIP() << "VACC_NUM_THREADS is set";
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  set_num_threads(0);
  EXPECT_EQ(codegen::cpu::num_threads(), CPU_COUNT(&set));
}

}  // namespace
}  // namespace vacc
