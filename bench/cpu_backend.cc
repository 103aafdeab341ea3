// The CPU backend's speed on single-operator ONNX models (bench/make_cpu_bench_models.py):
// imports each model, compiles it with the CPU executor (compiler/ops/cpu), checks the result
// against the graph reference executor, and prints the median wall time of a run.
//
//   bench_cpu_backend [MODEL.onnx...] [--iters N]
// With no model, the same three operators are built in (seeded random weights): a
// ResNet-18-like conv 1x64x56x56 -> 64 (3x3, pad 1, bias), a 1024x1024x1024 MatMul and a
// batch-1 Gemm 1024 -> 1024 (transB, bias). bench/ort_cpu.js times the ONNX models with ONNX
// Runtime (see bench/RESULTS.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "vacc/codegen/cpu/jit.h"
#include "vacc/codegen/cpu/thread_pool.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/ops/cpu/executor.h"

using namespace vacc;

namespace {

graph::Tensor random_tensor(graph::Shape shape, float scale, unsigned seed) {
  graph::Tensor t(graph::DType::kFloat32, std::move(shape));
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0, scale);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// The built-in single-operator graphs (the shapes of bench/make_cpu_bench_models.py).
std::vector<std::pair<std::string, graph::Graph>> builtin_graphs() {
  using graph::DType;
  using graph::OpKind;
  std::vector<std::pair<std::string, graph::Graph>> out;
  {
    graph::Graph g;
    graph::Value *x = g.add_value("x", DType::kFloat32, {1, 64, 56, 56});
    graph::Value *w = g.add_constant("w", random_tensor({64, 64, 3, 3}, 0.05f, 2));
    graph::Value *b = g.add_constant("b", random_tensor({64}, 1.0f, 3));
    graph::Value *y = g.add_value("y", DType::kFloat32, {1, 64, 56, 56});
    graph::Attributes a;
    a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    a.set("kernel_shape", std::vector<int64_t>{3, 3});
    g.add_input(x);
    g.add_node(OpKind::kConv, "conv", {x, w, b}, {y}, a);
    g.add_output(y);
    out.emplace_back("conv 1x64x56x56 -> 64, 3x3 pad 1", std::move(g));
  }
  {
    graph::Graph g;
    graph::Value *x = g.add_value("x", DType::kFloat32, {1024, 1024});
    graph::Value *w = g.add_constant("w", random_tensor({1024, 1024}, 0.03f, 4));
    graph::Value *y = g.add_value("y", DType::kFloat32, {1024, 1024});
    g.add_input(x);
    g.add_node(OpKind::kMatMul, "matmul", {x, w}, {y});
    g.add_output(y);
    out.emplace_back("matmul 1024x1024 * 1024x1024", std::move(g));
  }
  {
    graph::Graph g;
    graph::Value *x = g.add_value("x", DType::kFloat32, {1, 1024});
    graph::Value *w = g.add_constant("w", random_tensor({1024, 1024}, 0.03f, 5));
    graph::Value *b = g.add_constant("b", random_tensor({1024}, 1.0f, 6));
    graph::Value *y = g.add_value("y", DType::kFloat32, {1, 1024});
    graph::Attributes a;
    a.set("transB", int64_t{1});
    g.add_input(x);
    g.add_node(OpKind::kGemm, "gemm", {x, w, b}, {y}, a);
    g.add_output(y);
    out.emplace_back("gemm 1x1024 -> 1024 (transB)", std::move(g));
  }
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  int iters = 50;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--iters" && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else {
      models.push_back(argv[i]);
    }
  }
  std::vector<std::pair<std::string, graph::Graph>> graphs;
  if (models.empty()) {
    graphs = builtin_graphs();
  } else {
    for (const std::string &path : models) graphs.emplace_back(path, graph::import_onnx(path));
  }
  std::printf("threads: %d\n", codegen::cpu::num_threads());
  for (auto &[path, g] : graphs) {
    std::vector<graph::Tensor> inputs;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (const graph::Value *v : g.inputs()) {
      graph::Tensor t(v->dtype, v->shape);
      for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = dist(rng);
      inputs.push_back(t);
    }
    auto t0 = std::chrono::steady_clock::now();
    ops::cpu::CpuExecutor exec(g);
    double compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    graph::Tensor got = exec.run(inputs)[0];
    graph::Tensor want = graph::ReferenceExecutor(g).run(inputs)[0];
    double err = 0, ref = 0;
    for (int64_t i = 0; i < got.size(); ++i) {
      err = std::max(err, std::abs(got.as_double(i) - want.as_double(i)));
      ref = std::max(ref, std::abs(want.as_double(i)));
    }
    std::vector<double> ms;
    for (int i = 0; i < iters; ++i) {
      auto a = std::chrono::steady_clock::now();
      exec.run(inputs);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf(
        "%s: median %.3f ms, min %.3f ms (%d runs; compile %.0f ms; max error %.2g of %.3g)\n",
        path.c_str(), ms[ms.size() / 2], ms[0], iters, compile_ms, err, ref);
  }
  return 0;
}
