// CPU steps on the GPU backend (`vacc run --fallback gpu`): nodes the GPU backend has a kernel
// for (ops/gpu) are compiled to PTX (codegen/gpu) and run on the GPU through the runtime's CUDA
// driver device; the others run on the LLVM CPU backend. Opening the device fails with the
// reason when the machine has no GPU.
#pragma once

#include <map>
#include <memory>

#include "vacc/host/graph_kernels.h"
#include "vacc/codegen/gpu/ptx.h"
#include "vacc/ops/cpu/executor.h"
#include "vacc/runtime/gpu_device.h"

namespace vacc::host {

// The runtime's form of a compiled GPU module: PTX, launches, buffer sizes, written buffers.
runtime::GpuProgram gpu_program(const codegen::gpu::Module &m);

// A tir::Func compiled for and loaded on the GPU, run on host buffers (one per parameter).
class GpuFunction {
 public:
  GpuFunction(runtime::GpuDevice &device, const tir::Func &f);
  // Parameter `param` is the same every run (a weight): on the GPU from now on.
  void keep_resident(size_t param, const void *host);
  runtime::GpuTimes run(const std::vector<void *> &host) const;

 private:
  runtime::GpuDevice &device_;
  std::shared_ptr<runtime::GpuDevice::Loaded> loaded_;
};

class GpuKernels : public GraphKernels {
 public:
  explicit GpuKernels(const isa::Package &package);
  std::string name() const override { return "gpu (" + device_->name() + ")"; }
  // Steps that ran on the GPU and on the CPU so far.
  int gpu_steps() const { return gpu_steps_; }
  int cpu_steps() const { return cpu_steps_; }

 protected:
  std::vector<graph::Tensor> execute(size_t index, const graph::Node &node,
                                     const std::vector<const graph::Tensor *> &in) override;

 private:
  struct Step {
    std::unique_ptr<GpuFunction> gpu;
    std::vector<graph::Tensor> constants;
    std::unique_ptr<ops::cpu::NodeKernel> cpu;
  };
  std::unique_ptr<runtime::GpuDevice> device_;
  std::map<size_t, Step> steps_;
  int gpu_steps_ = 0, cpu_steps_ = 0;
};

}  // namespace vacc::host
