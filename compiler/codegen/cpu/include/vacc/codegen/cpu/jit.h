// The CPU backend: loop IR (tir::Func) lowered to LLVM 14 IR, optimized with the O3 pipeline
// for the host CPU and JIT-compiled with ORC LLJIT. Loops marked vectorize become explicit
// vector code (contiguous loads and stores, gathers otherwise) when their body allows it and
// carry LLVM's vectorize hint when it does not; unrolled loops are unrolled; parallel loops
// run on the backend's thread pool (thread_pool.h). Compiled kernels are cached by a
// structural hash of the IR, so identical kernels (same shapes, different names) compile once,
// and, once use_disk_cache() is called, on disk (kernel_cache.h), so that another process links
// the object code instead of compiling it again.
//
// A kernel is called with one pointer per Func parameter, in order, each to a dense row-major
// array of the parameter's element type (bool as one byte, uint8 as uint8_t, float32 as float).
// Buffers must not overlap. With VACC_CPU_DUMP_DIR set, every compiled kernel's loop IR (.tir)
// and optimized LLVM IR (.ll) are written there. Accelerator statements (DMA, GEMM, ALU, tokens)
// are rejected with a vacc::Error naming the function.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "vacc/tir/func.h"

namespace vacc::codegen::cpu {

class Kernel {
 public:
  using Fn = void (*)(void *const *args);
  Kernel(std::string name, Fn fn, size_t num_params)
      : name_(std::move(name)), fn_(fn), num_params_(num_params) {}
  // Runs the kernel; args.size() must equal the number of parameters.
  void run(const std::vector<void *> &args) const;
  const std::string &name() const { return name_; }

 private:
  std::string name_;
  Fn fn_;
  size_t num_params_;
};

struct JitStats {
  int64_t compiled = 0;        // kernels compiled (lowered, optimized, code generated)
  int64_t cache_hits = 0;      // compile() calls answered from the in-process cache
  int64_t disk_hits = 0;       // kernels linked from the disk cache's object code
  int64_t disk_damaged = 0;    // disk entries found damaged, compiled again and replaced
  double compile_seconds = 0;  // in compile(), whether compiling or loading from disk
};

class Jit {
 public:
  Jit();
  ~Jit();
  Jit(const Jit &) = delete;
  Jit &operator=(const Jit &) = delete;

  // The process-wide JIT (kernels live as long as the process).
  static Jit &global();

  // Compiles f (or returns the cached kernel of a structurally equal Func). Thread-safe.
  std::shared_ptr<const Kernel> compile(const tir::Func &f);
  JitStats stats() const;

  // From now on, kernels are looked up in and stored to the disk cache in `dir`
  // (default_kernel_cache_dir()); "" turns the disk cache off. Problems with the cache (a
  // damaged entry, a directory that cannot be written) are reported through `note` (default:
  // stderr) and never fail a compile.
  void use_disk_cache(const std::string &dir,
                      std::function<void(const std::string &)> note = nullptr);
  // What identifies this code generator in disk cache keys: target triple, CPU, features,
  // LLVM's version and vacc's build id.
  std::string generator() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The LLVM IR of f after lowering (optimized when `optimize`), for tests and dumps.
std::string llvm_ir(const tir::Func &f, bool optimize);

// Bytes in the host's widest vector register (64 with AVX-512, 32 with AVX2, else 16); CPU
// schedules pick vector widths from it.
int native_vector_bytes();

}  // namespace vacc::codegen::cpu
