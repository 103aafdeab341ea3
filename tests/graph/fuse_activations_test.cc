// The float graph's activation fusion (passes/fuse_activations.h): Conv -> Relu and
// Conv -> Clip become one Conv whose reference output equals the unfused graph's exactly;
// a Conv read twice, a non-constant Clip bound or an activation that is a graph output block
// the fusion.
#include "vacc/graph/passes/fuse_activations.h"

#include <gtest/gtest.h>

#include <random>

#include "vacc/graph/reference_executor.h"

using namespace vacc::graph;

namespace {

Tensor random_floats(Shape shape, unsigned seed) {
  Tensor t(DType::kFloat32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// x -> Conv(3x3, pad 1) -> y -> `act` -> z -> Add(z, x) -> out: the activation's output is
// not a graph output, so it can fuse.
struct Net {
  Graph g;
  Node *conv = nullptr;
  Value *x = nullptr, *y = nullptr;
  Net() {
    x = g.add_value("x", DType::kFloat32, {1, 4, 6, 6});
    g.add_input(x);
    Value *w = g.add_constant("w", random_floats({4, 4, 3, 3}, 1));
    Value *b = g.add_constant("b", random_floats({4}, 2));
    y = g.add_value("y", DType::kFloat32, {1, 4, 6, 6});
    Attributes at;
    at.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    conv = g.add_node(OpKind::kConv, "conv", {x, w, b}, {y}, at);
  }
  void finish(Value *z) {
    Value *out = g.add_value("out", DType::kFloat32, {1, 4, 6, 6});
    g.add_node(OpKind::kAdd, "add", {z, x}, {out});
    g.add_output(out);
  }
};

Tensor run(const Graph &g) {
  return ReferenceExecutor(g).run({random_floats({1, 4, 6, 6}, 3)})[0];
}

void expect_same(const Tensor &a, const Tensor &b) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.size(); ++i) ASSERT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;
}

TEST(FuseActivations, ReluBecomesTheConvsLowerBound) {
  Net n;
  Value *z = n.g.add_value("z", DType::kFloat32, {1, 4, 6, 6});
  n.g.add_node(OpKind::kRelu, "relu", {n.y}, {z});
  n.finish(z);
  const Tensor before = run(n.g);
  EXPECT_EQ(fuse_activations(n.g), 1);
  EXPECT_EQ(n.g.num_nodes(), 2);
  EXPECT_EQ(n.conv->attrs.get_float("activation_min", -1), 0.0f);
  EXPECT_FALSE(n.conv->attrs.has("activation_max"));
  expect_same(run(n.g), before);
}

TEST(FuseActivations, ClipBoundsBecomeTheConvsBounds) {
  Net n;
  Value *lo = n.g.add_constant("lo", Tensor::scalar(-0.25f));
  Value *hi = n.g.add_constant("hi", Tensor::scalar(0.5f));
  Value *z = n.g.add_value("z", DType::kFloat32, {1, 4, 6, 6});
  n.g.add_node(OpKind::kClip, "clip", {n.y, lo, hi}, {z});
  n.finish(z);
  const Tensor before = run(n.g);
  EXPECT_EQ(fuse_activations(n.g), 1);
  EXPECT_EQ(n.conv->attrs.get_float("activation_min", 0), -0.25f);
  EXPECT_EQ(n.conv->attrs.get_float("activation_max", 0), 0.5f);
  expect_same(run(n.g), before);
}

TEST(FuseActivations, BlockedWhereTheValuesAreNeededOrNotConstant) {
  {  // the Conv's output read by the activation and the Add
    Net n;
    Value *z = n.g.add_value("z", DType::kFloat32, {1, 4, 6, 6});
    n.g.add_node(OpKind::kRelu, "relu", {n.y}, {z});
    Value *out = n.g.add_value("out", DType::kFloat32, {1, 4, 6, 6});
    n.g.add_node(OpKind::kAdd, "add", {z, n.y}, {out});
    n.g.add_output(out);
    EXPECT_EQ(fuse_activations(n.g), 0);
  }
  {  // a Clip bound that is not a constant (a graph input)
    Net n;
    Value *lo = n.g.add_value("lo", DType::kFloat32, {});
    n.g.add_input(lo);
    Value *z = n.g.add_value("z", DType::kFloat32, {1, 4, 6, 6});
    n.g.add_node(OpKind::kClip, "clip", {n.y, lo}, {z});
    n.finish(z);
    EXPECT_EQ(fuse_activations(n.g), 0);
  }
  {  // the activation's output is the graph's output
    Net n;
    Value *z = n.g.add_value("z", DType::kFloat32, {1, 4, 6, 6});
    n.g.add_node(OpKind::kRelu, "relu", {n.y}, {z});
    n.g.add_output(z);
    EXPECT_EQ(fuse_activations(n.g), 0);
  }
}

}  // namespace
