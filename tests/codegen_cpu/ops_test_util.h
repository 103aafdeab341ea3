// Helpers of the CPU operator tests: seeded random tensors, and one graph run on the CPU backend's
// executor and on the graph reference executor, compared.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>

#include "vacc/graph/graph.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/ops/cpu/executor.h"

namespace vacc::test {

using graph::DType;
using graph::Graph;
using graph::OpKind;
using graph::ReferenceExecutor;
using graph::Shape;
using graph::Tensor;
using graph::Value;

inline Tensor random_tensor(DType dtype, Shape shape, unsigned seed) {
  Tensor t(dtype, std::move(shape));
  std::mt19937 rng(seed);
  graph::visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < t.size(); ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        t.data<T>()[i] = std::uniform_real_distribution<T>(-1, 1)(rng);
      } else if constexpr (std::is_same_v<T, int32_t>) {
        t.data<T>()[i] = static_cast<T>(rng() % 200001) - 100000;
      } else {
        t.data<T>()[i] = static_cast<T>(rng());
      }
    }
  });
  return t;
}

// Runs both executors on the graph's inputs (random) and compares the first output.
inline void compare(const Graph &g, double tolerance) {
  std::vector<Tensor> inputs;
  unsigned seed = 11;
  for (const Value *v : g.inputs()) inputs.push_back(random_tensor(v->dtype, v->shape, seed++));
  Tensor want = ReferenceExecutor(g).run(inputs)[0];
  Tensor got = vacc::ops::cpu::CpuExecutor(g).run(inputs)[0];
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  if (tolerance == 0) {
    for (int64_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got.as_int(i), want.as_int(i)) << "element " << i << "\n" << graph::print_graph(g);
    }
    return;
  }
  double ref = 0;
  for (int64_t i = 0; i < want.size(); ++i) ref = std::max(ref, std::abs(want.as_double(i)));
  for (int64_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got.as_double(i), want.as_double(i), tolerance * ref) << "element " << i;
  }
}

// Runs one node of `outputs` outputs (all graph outputs) on both executors over the given
// inputs (graph inputs); returns (CPU backend, reference), one tensor per output.
inline std::pair<std::vector<Tensor>, std::vector<Tensor>> run_node(
    OpKind op, const std::vector<Tensor> &inputs, graph::Attributes attrs = {}, int outputs = 1) {
  Graph g;
  std::vector<Value *> ins, outs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ins.push_back(g.add_value("x" + std::to_string(i), inputs[i].dtype(), inputs[i].shape()));
    g.add_input(ins.back());
  }
  for (int k = 0; k < outputs; ++k)
    outs.push_back(g.add_value("y" + std::to_string(k), DType::kFloat32, {}));
  graph::infer_node(*g.add_node(op, "op", ins, outs, std::move(attrs)));
  for (Value *y : outs) g.add_output(y);
  return {vacc::ops::cpu::CpuExecutor(g).run(inputs), ReferenceExecutor(g).run(inputs)};
}

// Runs one single-output node on both executors; returns (CPU backend, reference).
inline std::pair<Tensor, Tensor> run_both(OpKind op, const std::vector<Tensor> &inputs, DType out,
                                          graph::Attributes attrs = {}) {
  auto [got, want] = run_node(op, inputs, std::move(attrs));
  EXPECT_EQ(got[0].dtype(), out);
  return {got[0], want[0]};
}

// Every element of got within tolerance * (1 + |want|) of want, same shapes and types.
inline void expect_close(const Tensor &got, const Tensor &want, double tolerance,
                         const std::string &what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  for (int64_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got.as_double(i), want.as_double(i), tolerance * (1 + std::abs(want.as_double(i))))
        << what << ": element " << i;
}

}  // namespace vacc::test
