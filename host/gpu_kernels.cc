#include "vacc/host/gpu_kernels.h"

#include "vacc/ops/gpu/ops.h"
#include "vacc/support/error.h"
#include "vacc/tir/functor.h"

namespace vacc::host {

runtime::GpuProgram gpu_program(const codegen::gpu::Module &m) {
  runtime::GpuProgram p;
  p.name = m.name;
  p.ptx = m.ptx;
  p.params = m.num_params;
  for (const tir::Buffer &b : m.buffers) {
    int64_t eb = b->dtype.is_bool() ? 1 : b->dtype.bits / 8;
    p.buffer_bytes.push_back(b->elems() * eb);
  }
  p.written.assign(m.num_params, false);
  for (const codegen::gpu::Kernel &k : m.kernels) {
    runtime::GpuLaunch l;
    l.entry = k.name;
    l.grid = k.grid;
    l.block = k.block;
    l.shared_bytes = k.shared_bytes;
    l.args = k.args;
    p.launches.push_back(l);
    // By the kernel's own parameters and their argument indices: a module from compile()'s cache
    // names f's buffers in m.buffers but its kernels' bodies still hold the first Func's.
    tir::for_each_stmt(k.func.body, [&](const tir::Stmt &s) {
      const tir::Store *st = s.as<tir::Store>();
      if (!st) return;
      for (size_t j = 0; j < k.func.params.size(); ++j) {
        size_t arg = static_cast<size_t>(k.args[j]);
        if (k.func.params[j] == st->buffer && arg < m.num_params) p.written[arg] = true;
      }
    });
  }
  return p;
}

GpuFunction::GpuFunction(runtime::GpuDevice &device, const tir::Func &f)
    : device_(device), loaded_(device.load(gpu_program(codegen::gpu::compile(f)))) {}

void GpuFunction::keep_resident(size_t param, const void *host) {
  device_.keep_resident(*loaded_, param, host);
}

runtime::GpuTimes GpuFunction::run(const std::vector<void *> &host) const {
  return device_.run(*loaded_, host);
}

GpuKernels::GpuKernels(const isa::Package &package) : GraphKernels(package) {
  try {
    device_ = runtime::GpuDevice::open();
  } catch (const Error &e) {
    fail("--fallback gpu: {}; run CPU steps on the CPU with --fallback cpu", e.what());
  }
}

std::vector<graph::Tensor> GpuKernels::execute(size_t index, const graph::Node &node,
                                               const std::vector<const graph::Tensor *> &in) {
  auto [it, fresh] = steps_.try_emplace(index);
  Step &step = it->second;
  if (fresh) {
    ops::gpu::GpuNodeKernel k;
    if (ops::gpu::build_node_kernel(node, &k, nullptr)) {
      step.gpu = std::make_unique<GpuFunction>(*device_, k.func);
      step.constants = std::move(k.constants);
      // Weights and the kernel's own constants go to the GPU once, not every run.
      size_t param = 0;
      for (size_t i = 0; i < in.size(); ++i) {
        if (!in[i]) continue;
        const graph::Value *v = i < node.inputs.size() ? node.inputs[i] : nullptr;
        if (v && v->is_constant()) step.gpu->keep_resident(param, in[i]->raw());
        ++param;
      }
      for (const graph::Tensor &c : step.constants) step.gpu->keep_resident(param++, c.raw());
    } else {
      step.cpu = std::make_unique<ops::cpu::NodeKernel>(node, static_cast<int>(index));
    }
  }
  if (step.cpu) {
    ++cpu_steps_;
    return step.cpu->run(in);
  }
  ++gpu_steps_;
  std::vector<graph::Tensor> outs;
  std::vector<void *> args;
  for (const graph::Tensor *t : in)
    if (t) args.push_back(const_cast<uint8_t *>(t->raw()));
  for (const graph::Tensor &c : step.constants) args.push_back(const_cast<uint8_t *>(c.raw()));
  for (const graph::Value *ov : node.outputs) {
    outs.emplace_back(ov ? graph::Tensor(ov->dtype, ov->shape) : graph::Tensor());
    if (ov) args.push_back(outs.back().raw());
  }
  step.gpu->run(args);
  return outs;
}

}  // namespace vacc::host
