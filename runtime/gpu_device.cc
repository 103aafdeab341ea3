// The CUDA driver API by dlopen: the entry points below are declared here from the driver API's
// documented C signatures (handles are opaque pointers, results an int where 0 is success).
#include "vacc/runtime/gpu_device.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <chrono>
#include <map>

#include "vacc/support/error.h"

namespace vacc::runtime {
namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUdeviceptr = unsigned long long;
constexpr int kAttrComputeMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrComputeMinor = 76;
constexpr int kJitErrorLogBuffer = 5;  // CU_JIT_ERROR_LOG_BUFFER
constexpr int kJitErrorLogSize = 6;    // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES

struct Driver {
  void *lib = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
  CUresult (*cuGetErrorString)(CUresult, const char **);

  std::string error(CUresult r) const {
    const char *s = nullptr;
    if (cuGetErrorString && cuGetErrorString(r, &s) == 0 && s) return fmt::format("{} ({})", s, r);
    return fmt::format("CUDA error {}", r);
  }
  void check(CUresult r, const char *what) const {
    if (r != 0) fail("GPU: {} failed: {}", what, error(r));
  }
};

// The driver, loaded once per process; throws the reason when it cannot be.
const Driver &driver() {
  static Driver d;
  static std::string failure = [] {
    d.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d.lib) {
      return fmt::format("libcuda.so.1 cannot be loaded ({}): this machine has no NVIDIA driver",
                         dlerror());
    }
    std::string missing;
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(d.lib, name));
      if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    sym(d.cuInit, "cuInit");
    sym(d.cuDeviceGetCount, "cuDeviceGetCount");
    sym(d.cuDeviceGet, "cuDeviceGet");
    sym(d.cuDeviceGetName, "cuDeviceGetName");
    sym(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    sym(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    sym(d.cuCtxSetCurrent, "cuCtxSetCurrent");
    sym(d.cuCtxSynchronize, "cuCtxSynchronize");
    sym(d.cuModuleLoadDataEx, "cuModuleLoadDataEx");
    sym(d.cuModuleUnload, "cuModuleUnload");
    sym(d.cuModuleGetFunction, "cuModuleGetFunction");
    sym(d.cuMemAlloc, "cuMemAlloc_v2");
    sym(d.cuMemFree, "cuMemFree_v2");
    sym(d.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    sym(d.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    sym(d.cuLaunchKernel, "cuLaunchKernel");
    sym(d.cuGetErrorString, "cuGetErrorString");
    if (!missing.empty()) return "libcuda.so.1 lacks " + missing + " (a driver too old)";
    CUresult r = d.cuInit(0);
    if (r != 0) return "the NVIDIA driver does not initialize: " + d.error(r);
    return std::string();
  }();
  if (!failure.empty()) fail("no GPU: {}", failure);
  return d;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

struct GpuDevice::Impl {
  const Driver *d = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  std::string name;
};

class GpuDevice::Loaded {
 public:
  const Driver *d = nullptr;
  GpuProgram program;
  CUmodule module = nullptr;
  std::vector<CUfunction> functions;
  std::vector<CUdeviceptr> buffers;
  std::vector<bool> resident;  // per caller buffer: on the GPU already, never copied in again
  ~Loaded() {
    for (CUdeviceptr p : buffers) d->cuMemFree(p);
    if (module) d->cuModuleUnload(module);
  }
};

GpuDevice::GpuDevice(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GpuDevice::~GpuDevice() {
  impl_->d->cuDevicePrimaryCtxRelease(impl_->dev);
}

std::unique_ptr<GpuDevice> GpuDevice::open(int ordinal) {
  const Driver &d = driver();
  int count = 0;
  d.check(d.cuDeviceGetCount(&count), "counting GPUs");
  if (count == 0) fail("no GPU: the NVIDIA driver reports no device");
  if (ordinal < 0 || ordinal >= count)
    fail("no GPU {}: the NVIDIA driver reports {} device(s)", ordinal, count);
  auto impl = std::make_unique<Impl>();
  impl->d = &d;
  d.check(d.cuDeviceGet(&impl->dev, ordinal), "opening the GPU");
  d.check(d.cuDevicePrimaryCtxRetain(&impl->ctx, impl->dev), "creating a context");
  d.check(d.cuCtxSetCurrent(impl->ctx), "making the context current");
  char name[256] = {};
  d.check(d.cuDeviceGetName(name, sizeof name, impl->dev), "naming the GPU");
  int major = 0, minor = 0;
  d.check(d.cuDeviceGetAttribute(&major, kAttrComputeMajor, impl->dev), "reading sm");
  d.check(d.cuDeviceGetAttribute(&minor, kAttrComputeMinor, impl->dev), "reading sm");
  impl->name = fmt::format("{} (sm_{}{})", name, major, minor);
  return std::unique_ptr<GpuDevice>(new GpuDevice(std::move(impl)));
}

std::string GpuDevice::name() const {
  return impl_->name;
}

std::shared_ptr<GpuDevice::Loaded> GpuDevice::load(const GpuProgram &program) {
  const Driver &d = *impl_->d;
  d.check(d.cuCtxSetCurrent(impl_->ctx), "making the context current");
  auto l = std::make_shared<Loaded>();
  l->d = &d;
  l->program = program;
  std::string log(8192, '\0');
  int opts[] = {kJitErrorLogBuffer, kJitErrorLogSize};
  void *vals[] = {log.data(), reinterpret_cast<void *>(log.size())};
  CUresult r = d.cuModuleLoadDataEx(&l->module, program.ptx.c_str(), 2, opts, vals);
  if (r != 0) {
    fail("GPU: the driver rejects the PTX of {}: {}\n{}", program.name, d.error(r), log.c_str());
  }
  for (const GpuLaunch &k : program.launches) {
    CUfunction fn = nullptr;
    d.check(d.cuModuleGetFunction(&fn, l->module, k.entry.c_str()), "finding a kernel");
    l->functions.push_back(fn);
  }
  for (int64_t bytes : program.buffer_bytes) {
    CUdeviceptr p = 0;
    d.check(d.cuMemAlloc(&p, static_cast<size_t>(std::max<int64_t>(bytes, 1))),
            "allocating device memory");
    l->buffers.push_back(p);
  }
  l->resident.assign(program.params, false);
  return l;
}

void GpuDevice::keep_resident(Loaded &l, size_t param, const void *host) {
  const Driver &d = *impl_->d;
  VACC_CHECK(param < l.program.params)
      << l.program.name << " takes " << l.program.params << " buffers";
  VACC_CHECK(!l.program.written[param]) << l.program.name << " writes buffer " << param;
  d.check(d.cuCtxSetCurrent(impl_->ctx), "making the context current");
  if (l.program.buffer_bytes[param] > 0) {
    d.check(
        d.cuMemcpyHtoD(l.buffers[param], host, static_cast<size_t>(l.program.buffer_bytes[param])),
        "copying to the GPU");
  }
  l.resident[param] = true;
}

GpuTimes GpuDevice::run(Loaded &l, const std::vector<void *> &host) {
  const Driver &d = *impl_->d;
  const GpuProgram &p = l.program;
  VACC_CHECK(host.size() == p.params) << p.name << " takes " << p.params << " buffers";
  d.check(d.cuCtxSetCurrent(impl_->ctx), "making the context current");
  GpuTimes t;
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < p.params; ++i) {
    if (p.buffer_bytes[i] > 0 && !l.resident[i]) {
      d.check(d.cuMemcpyHtoD(l.buffers[i], host[i], static_cast<size_t>(p.buffer_bytes[i])),
              "copying to the GPU");
    }
  }
  t.copy_in = since(t0);
  t0 = std::chrono::steady_clock::now();
  for (size_t k = 0; k < p.launches.size(); ++k) {
    const GpuLaunch &g = p.launches[k];
    std::vector<CUdeviceptr> ptrs;
    for (int a : g.args) ptrs.push_back(l.buffers[static_cast<size_t>(a)]);
    std::vector<void *> args;
    for (CUdeviceptr &q : ptrs) args.push_back(&q);
    d.check(d.cuLaunchKernel(l.functions[k], static_cast<unsigned>(g.grid[0]),
                             static_cast<unsigned>(g.grid[1]), static_cast<unsigned>(g.grid[2]),
                             static_cast<unsigned>(g.block[0]), static_cast<unsigned>(g.block[1]),
                             static_cast<unsigned>(g.block[2]), 0, nullptr, args.data(), nullptr),
            "launching a kernel");
  }
  d.check(d.cuCtxSynchronize(), "running the kernels");
  t.kernels = since(t0);
  t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < p.params; ++i) {
    if (p.written[i] && p.buffer_bytes[i] > 0) {
      d.check(d.cuMemcpyDtoH(host[i], l.buffers[i], static_cast<size_t>(p.buffer_bytes[i])),
              "copying from the GPU");
    }
  }
  t.copy_out = since(t0);
  return t;
}

}  // namespace vacc::runtime
