// The GPU backend against the LLVM CPU backend on single operators: a ResNet-18-like conv
// 1x64x56x56 -> 64 (3x3, pad 1, bias), a 1024x1024x1024 MatMul and a softmax over 1000 classes
// of 256 rows. Each node runs as `vacc run --fallback gpu` runs it (ops/gpu, codegen/gpu, the
// runtime's CUDA driver device: copies in, kernels, copies out) and as `--cpu llvm` does
// (ops/cpu); the GPU's outputs are checked against the CPU's. Median of --iters warm runs.
// Without a GPU it says why and exits 0 after timing the CPU side.
//
//   bench_gpu_ops [--iters N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "vacc/host/gpu_kernels.h"
#include "vacc/codegen/cpu/thread_pool.h"
#include "vacc/ops/cpu/executor.h"
#include "vacc/ops/gpu/ops.h"
#include "vacc/support/error.h"

using namespace vacc;

namespace {

graph::Tensor random_tensor(graph::Shape shape, unsigned seed) {
  graph::Tensor t(graph::DType::kFloat32, std::move(shape));
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0, 0.1f);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

struct Case {
  std::string name;
  graph::Graph g;
};

std::vector<Case> cases() {
  using graph::DType;
  using graph::OpKind;
  std::vector<Case> out;
  {
    graph::Graph g;
    graph::Value *x = g.add_value("x", DType::kFloat32, {1, 64, 56, 56});
    graph::Value *w = g.add_value("w", DType::kFloat32, {64, 64, 3, 3});
    graph::Value *b = g.add_value("b", DType::kFloat32, {64});
    graph::Value *y = g.add_value("y", DType::kFloat32, {1, 64, 56, 56});
    graph::Attributes a;
    a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    a.set("kernel_shape", std::vector<int64_t>{3, 3});
    g.add_node(OpKind::kConv, "conv", {x, w, b}, {y}, a);
    out.push_back({"conv 1x64x56x56 -> 64, 3x3 pad 1", std::move(g)});
  }
  {
    graph::Graph g;
    graph::Value *x = g.add_value("x", DType::kFloat32, {1024, 1024});
    graph::Value *w = g.add_value("w", DType::kFloat32, {1024, 1024});
    graph::Value *y = g.add_value("y", DType::kFloat32, {1024, 1024});
    g.add_node(OpKind::kMatMul, "matmul", {x, w}, {y});
    out.push_back({"matmul 1024x1024 * 1024x1024", std::move(g)});
  }
  {
    graph::Graph g;
    graph::Value *x = g.add_value("x", DType::kFloat32, {256, 1000});
    graph::Value *y = g.add_value("y", DType::kFloat32, {256, 1000});
    graph::Attributes a;
    a.set("axis", int64_t{-1});
    g.add_node(OpKind::kSoftmax, "softmax", {x}, {y}, a);
    out.push_back({"softmax 256x1000 (last axis)", std::move(g)});
  }
  return out;
}

template <typename F>
double median_seconds(int iters, F run) {
  run();  // warm
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  int iters = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc) iters = std::atoi(argv[++i]);
  }
  std::unique_ptr<runtime::GpuDevice> device;
  std::string no_gpu;
  try {
    device = runtime::GpuDevice::open();
  } catch (const Error &e) {
    no_gpu = e.what();
  }
  std::printf("CPU: LLVM backend, %d threads; GPU: %s\n", codegen::cpu::num_threads(),
              device ? device->name().c_str() : ("none (" + no_gpu + ")").c_str());
  std::printf("%-34s %12s %12s %12s %9s\n", "operator", "cpu ms", "gpu ms", "gpu kern ms",
              "cpu/gpu");
  int status = 0;
  for (Case &c : cases()) {
    graph::Node &node = *c.g.nodes()[0];
    std::vector<graph::Tensor> ins;
    std::vector<const graph::Tensor *> in_ptrs;
    unsigned seed = 1;
    for (const graph::Value *v : node.inputs) ins.push_back(random_tensor(v->shape, seed++));
    for (const graph::Tensor &t : ins) in_ptrs.push_back(&t);
    ops::cpu::NodeKernel cpu(node, 0);
    std::vector<graph::Tensor> cpu_out;
    double cpu_s = median_seconds(iters, [&] { cpu_out = cpu.run(in_ptrs); });
    if (!device) {
      std::printf("%-34s %12.3f %12s %12s %9s\n", c.name.c_str(), cpu_s * 1e3, "-", "-", "-");
      continue;
    }
    ops::gpu::GpuNodeKernel k;
    std::string why;
    if (!ops::gpu::build_node_kernel(node, &k, &why)) {
      std::fprintf(stderr, "%s\n", why.c_str());
      return 1;
    }
    host::GpuFunction gpu(*device, k.func);
    graph::Tensor out(graph::DType::kFloat32, node.outputs[0]->shape);
    std::vector<void *> args;
    for (graph::Tensor &t : ins) args.push_back(t.raw());
    args.push_back(out.raw());
    runtime::GpuTimes times;
    double gpu_s = median_seconds(iters, [&] { times = gpu.run(args); });
    double err = 0;
    for (int64_t i = 0; i < out.size(); ++i)
      err = std::max(err, double(std::abs(out.data<float>()[i] - cpu_out[0].data<float>()[i])));
    if (err > 1e-3) {
      std::fprintf(stderr, "%s: GPU differs from the CPU by %g\n", c.name.c_str(), err);
      status = 1;
    }
    std::printf("%-34s %12.3f %12.3f %12.3f %9.2f\n", c.name.c_str(), cpu_s * 1e3, gpu_s * 1e3,
                times.kernels * 1e3, cpu_s / gpu_s);
  }
  if (!device) std::printf("\nno GPU: only the CPU side was timed\n");
  return status;
}
