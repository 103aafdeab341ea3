// The GPU backend: loop IR (tir::Func) whose loops are bound to GPU blocks and threads
// (schedule::Stage::bind) lowered through the shared LLVM lowering (codegen/llvm) to LLVM 14's
// NVPTX target, producing PTX for sm_80 (which ptxas and the CUDA driver also assemble for
// sm_90). The runtime loads the PTX through the CUDA driver (runtime/gpu_device.h).
//
// The loop IR keeps its sequential meaning (docs/gpu_backend.md): a Func's top-level loop nests
// are kernel launches, one after another; a kernel's outer blockIdx loops are its grid; inside a
// block, each maximal nest of threadIdx loops is a phase that the block's threads run in
// parallel, and code between phases runs on every thread alike (it may loop, branch and
// allocate, not store). plan_kernels makes that explicit: barriers between phases where one's
// shared or global writes meet another's accesses, local buffers shared by phases made private
// to each thread when every access keeps to the thread's own slice (otherwise they live in
// shared memory), launch dimensions from the loops' extents.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vacc/tir/func.h"

namespace vacc::codegen::gpu {

// The target: an NVPTX GPU architecture Debian's LLVM 14 knows (up to sm_86).
struct Target {
  std::string arch = "sm_80";
};

// One kernel launch.
struct Kernel {
  std::string name;                // the PTX entry point
  tir::Func func;                  // its loop IR, barriers and private buffers explicit
  std::array<int64_t, 3> grid{};   // blocks per axis (x, y, z)
  std::array<int64_t, 3> block{};  // threads per axis
  int64_t shared_bytes = 0;        // static shared memory
  std::vector<int> args;           // per func param: its index in Module::buffers
};

// A lowered Func: its kernels in launch order over the Func's parameters and the temporary
// device buffers the kernels pass between them.
struct Module {
  std::string name;
  std::vector<tir::Buffer> buffers;  // the Func's params, then temporaries
  size_t num_params = 0;
  std::vector<Kernel> kernels;
  std::string ptx;  // every kernel's entry point, for target.arch
  std::string arch;
};

// The launch plan of f (no code generated): kernels, dimensions, barriers, private buffers.
// A Func that breaks the GPU rules (a store between phases, a thread axis bound twice in one
// nest, more than 1024 threads, too much shared memory, accelerator statements) is a
// vacc::Error naming the function and the rule.
Module plan_kernels(const tir::Func &f);

// plan_kernels plus PTX for every kernel. Cached by structural hash; thread-safe.
Module compile(const tir::Func &f, const Target &target = {});

// The NVPTX LLVM IR of f's kernels (optimized when `optimize`), for tests and dumps.
std::string nvptx_llvm_ir(const tir::Func &f, bool optimize, const Target &target = {});

// The limits plan_kernels checks against (every GPU vacc targets, sm_80 and later).
inline constexpr int64_t kMaxThreadsPerBlock = 1024;
inline constexpr int64_t kMaxSharedBytes = 48 * 1024;  // without opting in to more
inline constexpr int64_t kMaxLocalBytes = 16 * 1024;   // per thread, before it spills badly

}  // namespace vacc::codegen::gpu
