// The CPU backend's thread pool: parallel loops of JIT-compiled kernels run here. One pool per
// process with one thread per CPU the process may run on (its affinity mask; VACC_NUM_THREADS
// overrides), the calling thread one of them. Between loops the workers spin for a short while
// before they sleep, so that a model's steps, microseconds apart, find them awake. A parallel
// loop started from inside a worker runs serially on that worker.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace vacc::codegen::cpu {

// Splits [0, n) into contiguous chunks (parallel_chunk_bounds) and runs f(begin, end) on each;
// returns when all chunks are done.
void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)> &f);
int num_threads();
// The chunks parallel_for cuts a loop of n into on `threads` threads, claimed dynamically in
// order: chunk c is [bounds[c], bounds[c + 1]). For schedules that estimate their time on the
// pool.
std::vector<int64_t> parallel_chunk_bounds(int64_t n, int threads);
// Replaces the pool by one of n threads (n <= 0: the default above). Call it only while no
// parallel loop runs.
void set_num_threads(int n);

}  // namespace vacc::codegen::cpu

// Called from generated code: fn(closure, begin, end) over chunks of [0, n).
extern "C" void vacc_cpu_parallel_for(void (*fn)(void *, int64_t, int64_t), void *closure,
                                      int64_t n);
