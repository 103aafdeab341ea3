// Single operators through the CPU executor against the graph reference executor on seeded
// random data: vacc's integer operators bit-exact (per-channel shifts, partial bias, clips,
// the QAdd shifts), and float convolutions and matrix products of awkward shapes (tiles that
// do not divide, strides, groups) to 1e-5.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "vacc/graph/executor.h"
#include "vacc/graph/graph.h"
#include "vacc/ops/cpu/executor.h"

using namespace vacc::graph;

namespace {

Tensor random_tensor(DType dtype, Shape shape, unsigned seed) {
  Tensor t(dtype, std::move(shape));
  std::mt19937 rng(seed);
  visit_dtype(dtype, [&](auto tag) {
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
void compare(const Graph &g, double tolerance) {
  std::vector<Tensor> inputs;
  unsigned seed = 11;
  for (const Value *v : g.inputs()) inputs.push_back(random_tensor(v->dtype, v->shape, seed++));
  Tensor want = Executor(g).run(inputs)[0];
  Tensor got = vacc::ops::cpu::CpuExecutor(g).run(inputs)[0];
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  if (tolerance == 0) {
    for (int64_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got.as_int(i), want.as_int(i)) << "element " << i << "\n" << print_graph(g);
    }
    return;
  }
  double ref = 0;
  for (int64_t i = 0; i < want.size(); ++i) ref = std::max(ref, std::abs(want.as_double(i)));
  for (int64_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got.as_double(i), want.as_double(i), tolerance * ref) << "element " << i;
  }
}

TEST(CpuOps, QAddMatchesTheReferenceBitExactly) {
  Graph g;
  Value *a = g.add_value("a", DType::kInt8, {2, 3, 5, 7});
  Value *b = g.add_value("b", DType::kInt8, {2, 3, 5, 7});
  Value *y = g.add_value("y", DType::kInt8, {2, 3, 5, 7});
  g.add_input(a);
  g.add_input(b);
  Attributes at;
  at.set("lshift_a", int64_t{2});
  at.set("lshift_b", int64_t{0});
  at.set("rshift", int64_t{3});
  at.set("clip_min", int64_t{-100});
  at.set("clip_max", int64_t{90});
  g.add_node(OpKind::kQAdd, "qadd", {a, b}, {y}, at);
  g.add_output(y);
  compare(g, 0);
}

TEST(CpuOps, RequantizeWithPerChannelShiftsIsBitExact) {
  Graph g;
  Value *x = g.add_value("x", DType::kInt32, {2, 4, 3, 3});
  Value *y = g.add_value("y", DType::kInt8, {2, 4, 3, 3});
  g.add_input(x);
  Attributes at;
  at.set("shifts", std::vector<int64_t>{3, 9, -1, 12});
  at.set("clip_min", int64_t{0});
  g.add_node(OpKind::kRequantize, "rq", {x}, {y}, at);
  g.add_output(y);
  compare(g, 0);
}

TEST(CpuOps, QConvWithPartialBiasAndPerChannelShiftsIsBitExact) {
  Graph g;
  Value *x = g.add_value("x", DType::kInt8, {1, 5, 9, 11});
  Value *w = g.add_constant("w", random_tensor(DType::kInt8, {6, 5, 3, 3}, 3));
  Value *bias = g.add_constant("bias", random_tensor(DType::kInt32, {4}, 4));
  Value *y = g.add_value("y", DType::kInt8, {1, 6, 5, 6});
  g.add_input(x);
  Attributes at;
  at.set("strides", std::vector<int64_t>{2, 2});
  at.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  at.set("shifts", std::vector<int64_t>{6, 7, 8, 9, 10, 11});
  g.add_node(OpKind::kQConv, "qconv", {x, w, bias}, {y}, at);
  g.add_output(y);
  compare(g, 0);
}

TEST(CpuOps, QDenseIsBitExact) {
  Graph g;
  Value *x = g.add_value("x", DType::kInt8, {3, 70});
  Value *w = g.add_constant("w", random_tensor(DType::kInt8, {33, 70}, 5));
  Value *bias = g.add_constant("bias", random_tensor(DType::kInt32, {33}, 6));
  Value *y = g.add_value("y", DType::kInt8, {3, 33});
  g.add_input(x);
  Attributes at;
  at.set("shifts", std::vector<int64_t>{9});
  g.add_node(OpKind::kQDense, "qdense", {x, w, bias}, {y}, at);
  g.add_output(y);
  compare(g, 0);
}

TEST(CpuOps, GroupedStridedDilatedConvMatchesTheReference) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {2, 6, 19, 75});
  Value *w = g.add_constant("w", random_tensor(DType::kFloat32, {9, 2, 3, 3}, 7));
  Value *b = g.add_constant("b", random_tensor(DType::kFloat32, {9}, 8));
  Value *y = g.add_value("y", DType::kFloat32, {2, 9, 9, 37});
  g.add_input(x);
  Attributes at;
  at.set("group", int64_t{3});
  at.set("strides", std::vector<int64_t>{2, 2});
  at.set("dilations", std::vector<int64_t>{2, 1});
  at.set("pads", std::vector<int64_t>{1, 0, 1, 1});
  g.add_node(OpKind::kConv, "conv", {x, w, b}, {y}, at);
  g.add_output(y);
  compare(g, 1e-5);
}

TEST(CpuOps, MatMulWithNonDividingTilesMatchesTheReference) {
  Graph g;
  Value *a = g.add_value("a", DType::kFloat32, {3, 37, 129});
  Value *b = g.add_value("b", DType::kFloat32, {129, 100});
  Value *y = g.add_value("y", DType::kFloat32, {3, 37, 100});
  g.add_input(a);
  g.add_input(b);
  g.add_node(OpKind::kMatMul, "mm", {a, b}, {y});
  g.add_output(y);
  compare(g, 1e-5);
}

}  // namespace
