// `vacc bench model MODEL.onnx --float`: the whole float model on the CPU (or GPU) fallback
// backend, as `vacc run --float` runs it: its kernels compiled once (timed apart, the disk cache
// counted), one warm-up run, then --runs timed runs of the whole graph executor; median, min
// and max, and the median time per operator kind.
#pragma once

#include <cstdint>
#include <string>

#include "vacc/isa/package.h"
#include "vacc/runtime/graph_executor.h"

namespace vacc::cli {

struct FloatModelBench {
  std::string model, cpu = "llvm", fallback = "cpu", input;
  int threads = 0;  // 0: the thread pool's default (one per core, VACC_NUM_THREADS)
  int runs = 20;
  int64_t batch = 1;
  uint32_t seed = 1;
  bool json = false;
};

void run_float_model_bench(const FloatModelBench &a);

// --input, or deterministic uniform [0, 1) data of the package's one float32 input.
runtime::HostTensor bench_input(const std::string &model, const std::string &input, uint32_t seed,
                                const isa::Package &p);

}  // namespace vacc::cli
