// An NVIDIA GPU through the CUDA driver API, opened at run time: libcuda.so.1 is dlopen'ed and
// the few driver entry points vacc uses are looked up by name (Debian's main archive has no CUDA
// headers or libraries, and vacc must build and run where there is no GPU). PTX is JIT-compiled
// by the driver for the GPU present (sm_80 PTX runs on sm_80 and later, H100 included).
//
// The runtime knows nothing of the compiler: a GpuProgram is plain data (PTX text, launches,
// buffer sizes) that the `vacc` command builds from the GPU backend's output (codegen/gpu).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vacc::runtime {

// One kernel launch: the PTX entry, grid and block shapes, static shared memory, and per
// kernel parameter the index of the program buffer passed.
struct GpuLaunch {
  std::string entry;
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  int64_t shared_bytes = 0;
  std::vector<int> args;
};

// A program: kernels run in order over buffers. Buffers [0, params) are the caller's (copied in
// before, and those written copied back after); the rest are device temporaries.
struct GpuProgram {
  std::string name;
  std::string ptx;
  std::vector<GpuLaunch> launches;
  std::vector<int64_t> buffer_bytes;
  std::vector<bool> written;  // per caller buffer: copied back after the run
  size_t params = 0;
};

struct GpuTimes {
  double copy_in = 0, kernels = 0, copy_out = 0;  // seconds
};

class GpuDevice {
 public:
  // The first GPU (or `ordinal`). Throws vacc::Error saying why there is none: libcuda.so.1
  // missing (no NVIDIA driver), the driver failing to initialize, or no device.
  static std::unique_ptr<GpuDevice> open(int ordinal = 0);
  ~GpuDevice();
  GpuDevice(const GpuDevice &) = delete;
  GpuDevice &operator=(const GpuDevice &) = delete;

  std::string name() const;  // e.g. "NVIDIA H100 80GB HBM3 (sm_90)"

  class Loaded;
  // Loads (JIT-compiles) the program's PTX and allocates its buffers; a PTX the driver rejects
  // is a vacc::Error with the driver's log.
  std::shared_ptr<Loaded> load(const GpuProgram &program);
  // Copies caller buffer `param` to the GPU now and keeps it there: later runs neither copy it
  // in again nor read its host pointer (a model's weights, the same every run).
  void keep_resident(Loaded &program, size_t param, const void *host);
  // Runs a loaded program on host buffers (one per caller buffer, each buffer_bytes long; a
  // resident one's entry is ignored). Returns the time of each part, measured with the device
  // synchronized.
  GpuTimes run(Loaded &program, const std::vector<void *> &host);

 private:
  struct Impl;
  explicit GpuDevice(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vacc::runtime
