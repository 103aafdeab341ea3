// The operators a transformer needs beyond convolutions and matrix products, on the CPU backend
// against the graph reference executor, and the reference against plain C++: reductions over
// any set of axes (kept or dropped dimensions, integer types), ArgMax/ArgMin with ties,
// LayerNormalization over trailing axes with a broadcast scale and its Mean/InvStdDev outputs,
// vacc.Gelu in both forms, and a Linear layer's bias and GELU fused into its MatMul.
#include <gtest/gtest.h>

#include <cmath>

#include "ops_test_util.h"
#include "vacc/graph/passes/fuse_matmul_epilogues.h"

namespace vacc::test {
namespace {

Tensor axes(std::vector<int64_t> a) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(a.size())}, a);
}

// A one-node graph whose axes input is a constant (as the importer makes it).
std::pair<Tensor, Tensor> run_reduce(OpKind op, const Tensor &x, std::vector<int64_t> a,
                                     int64_t keepdims) {
  Graph g;
  Value *in = g.add_value("x", x.dtype(), x.shape());
  g.add_input(in);
  Value *ax = g.add_constant("axes", axes(a));
  Value *y = g.add_value("y", x.dtype(), {});
  graph::Attributes at;
  at.set("keepdims", keepdims);
  graph::infer_node(*g.add_node(op, "reduce", {in, a.empty() ? nullptr : ax}, {y}, at));
  g.add_output(y);
  return {ops::cpu::CpuExecutor(g).run({x})[0], ReferenceExecutor(g).run({x})[0]};
}

TEST(TransformerOps, ReductionsMatchThePlainSumsOverAnyAxes) {
  const Tensor x = random_tensor(DType::kFloat32, {3, 4, 5}, 1);
  // ReduceSum over axes {0, 2}, kept: y[0, j, 0] = sum over i, k.
  auto [got, want] = run_reduce(OpKind::kReduceSum, x, {0, -1}, 1);
  ASSERT_EQ(want.shape(), (Shape{1, 4, 1}));
  for (int64_t j = 0; j < 4; ++j) {
    double s = 0;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t k = 0; k < 5; ++k) s += x.data<float>()[(i * 4 + j) * 5 + k];
    EXPECT_NEAR(want.as_double(j), s, 1e-5);
  }
  expect_close(got, want, 1e-6, "ReduceSum");
  for (OpKind op :
       {OpKind::kReduceMean, OpKind::kReduceMax, OpKind::kReduceMin, OpKind::kReduceProd,
        OpKind::kReduceL1, OpKind::kReduceL2, OpKind::kReduceSumSquare, OpKind::kReduceLogSumExp}) {
    for (const std::vector<int64_t> &a : {std::vector<int64_t>{1}, std::vector<int64_t>{2},
                                          std::vector<int64_t>{0, 2}, std::vector<int64_t>{}}) {
      for (int64_t keep : {0, 1}) {
        auto [g2, w2] = run_reduce(op, x, a, keep);
        expect_close(g2, w2, 1e-6, graph::op_name(op));
      }
    }
  }
  // ReduceLogSum of positive values; ReduceMean's last axis is torch's LayerNorm statistic.
  Tensor pos = x;
  for (int64_t i = 0; i < pos.size(); ++i) pos.data<float>()[i] = 1.5f + pos.data<float>()[i];
  auto [g3, w3] = run_reduce(OpKind::kReduceLogSum, pos, {1}, 1);
  expect_close(g3, w3, 1e-6, "ReduceLogSum");
  auto [g4, w4] = run_reduce(OpKind::kReduceMean, x, {-1}, 1);
  EXPECT_NEAR(
      w4.as_double(0),
      (x.as_double(0) + x.as_double(1) + x.as_double(2) + x.as_double(3) + x.as_double(4)) / 5,
      1e-6);
  expect_close(g4, w4, 1e-6, "ReduceMean");
}

TEST(TransformerOps, IntegerReductionsAreExact) {
  const Tensor x = Tensor::from_vector<int32_t>({2, 3}, {5, -7, 9, 100, 3, -2});
  auto [gs, ws] = run_reduce(OpKind::kReduceSum, x, {1}, 0);
  EXPECT_EQ(ws.to_int_vector(), (std::vector<int64_t>{7, 101}));
  EXPECT_EQ(gs.to_int_vector(), ws.to_int_vector());
  auto [gm, wm] = run_reduce(OpKind::kReduceMax, x, {0}, 1);
  EXPECT_EQ(wm.to_int_vector(), (std::vector<int64_t>{100, 3, 9}));
  EXPECT_EQ(gm.to_int_vector(), wm.to_int_vector());
}

TEST(TransformerOps, ArgMaxAndArgMinBreakTiesByFirstOrLastIndex) {
  const Tensor x = Tensor::from_vector<float>({2, 4}, {1, 3, 3, 0, 2, 2, -1, -1});
  for (int64_t last : {0, 1}) {
    graph::Attributes at;
    at.set("axis", int64_t{1});
    at.set("keepdims", int64_t{0});
    at.set("select_last_index", last);
    auto [gmax, wmax] = run_both(OpKind::kArgMax, {x}, DType::kInt64, at);
    auto [gmin, wmin] = run_both(OpKind::kArgMin, {x}, DType::kInt64, at);
    EXPECT_EQ(wmax.to_int_vector(),
              last ? (std::vector<int64_t>{2, 1}) : (std::vector<int64_t>{1, 0}));
    EXPECT_EQ(wmin.to_int_vector(),
              last ? (std::vector<int64_t>{3, 3}) : (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(gmax.to_int_vector(), wmax.to_int_vector());
    EXPECT_EQ(gmin.to_int_vector(), wmin.to_int_vector());
  }
  graph::Attributes at;
  at.set("axis", int64_t{0});
  const Tensor y = random_tensor(DType::kFloat32, {5, 3, 2}, 4);
  auto [g, w] = run_both(OpKind::kArgMax, {y}, DType::kInt64, at);
  EXPECT_EQ(w.shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(g.to_int_vector(), w.to_int_vector());
}

TEST(TransformerOps, LayerNormalizationNormalizesTrailingAxes) {
  const Tensor x = random_tensor(DType::kFloat32, {2, 3, 8}, 5);
  const Tensor scale = random_tensor(DType::kFloat32, {3, 8}, 6);
  const Tensor bias = random_tensor(DType::kFloat32, {8}, 7);  // broadcast over axis 1
  graph::Attributes at;
  at.set("axis", int64_t{1});
  at.set("epsilon", 1e-3f);
  auto [got, want] = run_node(OpKind::kLayerNormalization, {x, scale, bias}, at, 3);
  ASSERT_EQ(want[1].shape(), (Shape{2, 1, 1}));
  // Row 0 by hand: mean and variance over its 24 elements.
  double mean = 0, var = 0;
  for (int i = 0; i < 24; ++i) mean += x.as_double(i) / 24;
  for (int i = 0; i < 24; ++i) var += (x.as_double(i) - mean) * (x.as_double(i) - mean) / 24;
  const double inv = 1 / std::sqrt(var + 1e-3);
  EXPECT_NEAR(want[1].as_double(0), mean, 1e-6);
  EXPECT_NEAR(want[2].as_double(0), inv, 1e-5);
  for (int i = 0; i < 24; ++i)
    EXPECT_NEAR(want[0].as_double(i),
                (x.as_double(i) - mean) * inv * scale.as_double(i) + bias.as_double(i % 8), 1e-5);
  for (int k = 0; k < 3; ++k) expect_close(got[k], want[k], 1e-5, "LayerNormalization output");
  // The last axis alone, no bias (torch's nn.LayerNorm).
  graph::Attributes last;
  auto [g1, w1] = run_both(
      OpKind::kLayerNormalization,
      {random_tensor(DType::kFloat32, {4, 16, 64}, 8), random_tensor(DType::kFloat32, {64}, 9)},
      DType::kFloat32, last);
  expect_close(g1, w1, 1e-5, "LayerNormalization, last axis");
}

TEST(TransformerOps, GeluMatchesItsDefinitionInBothForms) {
  std::vector<float> xs;
  for (int i = -600; i <= 600; ++i) xs.push_back(i * 0.01f);
  const Tensor x = Tensor::from_vector<float>({static_cast<int64_t>(xs.size())}, xs);
  for (const char *form : {"none", "tanh"}) {
    graph::Attributes at;
    at.set("approximate", std::string(form));
    auto [got, want] = run_both(OpKind::kGelu, {x}, DType::kFloat32, at);
    for (size_t i = 0; i < xs.size(); ++i) {
      const double v = xs[i];
      const double def =
          std::string(form) == "tanh"
              ? 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
              : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      ASSERT_NEAR(want.as_double(i), def, 1e-6) << form << " at " << v;
      ASSERT_NEAR(got.as_double(i), def, 1e-6) << form << " at " << v;
    }
  }
}

// An MLP as PyTorch exports it on a [batch, tokens, features] tensor, MatMul -> Add(bias) ->
// vacc.Gelu -> MatMul -> Add(bias [1, 1, N]) -> Relu: fuse_matmul_epilogues folds the first Add
// and the GELU into the first MatMul and the second Add into the second. The fused graph's
// reference equals the unfused one's exactly, and the CPU kernels agree with it.
TEST(TransformerOps, LinearBiasAndGeluFuseIntoTheMatMul) {
  for (const char *form : {"none", "tanh"}) {
    auto build = [&](Graph &g) {
      Value *x = g.add_value("x", DType::kFloat32, {2, 5, 24});
      g.add_input(x);
      auto node = [&](OpKind op, std::vector<Value *> ins, graph::Attributes at = {}) {
        Value *y = g.add_value(g.unique_name("v"), DType::kFloat32, {});
        graph::infer_node(*g.add_node(op, y->name, std::move(ins), {y}, std::move(at)));
        return y;
      };
      Value *w1 = g.add_constant("w1", random_tensor(DType::kFloat32, {24, 40}, 7));
      Value *b1 = g.add_constant("b1", random_tensor(DType::kFloat32, {40}, 8));
      Value *w2 = g.add_constant("w2", random_tensor(DType::kFloat32, {40, 24}, 9));
      Value *b2 = g.add_constant("b2", random_tensor(DType::kFloat32, {1, 1, 24}, 10));
      graph::Attributes at;
      at.set("approximate", std::string(form));
      Value *h =
          node(OpKind::kGelu, {node(OpKind::kAdd, {b1, node(OpKind::kMatMul, {x, w1})})}, at);
      Value *y = node(OpKind::kAdd, {node(OpKind::kMatMul, {h, w2}), b2});
      g.add_output(node(OpKind::kRelu, {y}));
    };
    Graph plain, fused;
    build(plain);
    build(fused);
    EXPECT_EQ(graph::fuse_matmul_epilogues(fused), 3) << form;
    int matmuls = 0, others = 0;
    for (const graph::Node *n : fused.nodes()) {
      matmuls += n->op == OpKind::kMatMul;
      others += n->op == OpKind::kAdd || n->op == OpKind::kGelu;
    }
    EXPECT_EQ(matmuls, 2);
    EXPECT_EQ(others, 0);
    const Tensor x = random_tensor(DType::kFloat32, {2, 5, 24}, 11);
    const Tensor want = ReferenceExecutor(plain).run({x})[0];
    const Tensor ref = ReferenceExecutor(fused).run({x})[0];
    ASSERT_EQ(ref.shape(), want.shape());
    for (int64_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(ref.as_double(i), want.as_double(i)) << form << " element " << i;
    expect_close(ops::cpu::CpuExecutor(fused).run({x})[0], want, 1e-5, "fused MLP");
  }
  // Not fused: an Add of a computed value, and a MatMul whose output is also read elsewhere.
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {3, 8});
  Value *r = g.add_value("r", DType::kFloat32, {3, 4});
  g.add_input(x);
  g.add_input(r);
  Value *w = g.add_constant("w", random_tensor(DType::kFloat32, {8, 4}, 12));
  Value *m = g.add_value("m", DType::kFloat32, {});
  graph::infer_node(*g.add_node(OpKind::kMatMul, "mm", {x, w}, {m}));
  Value *a = g.add_value("a", DType::kFloat32, {});
  graph::infer_node(*g.add_node(OpKind::kAdd, "add", {m, r}, {a}));
  Value *m2 = g.add_value("m2", DType::kFloat32, {});
  graph::infer_node(
      *g.add_node(OpKind::kMatMul, "mm2",
                  {a, g.add_constant("w2", random_tensor(DType::kFloat32, {4, 4}, 13))}, {m2}));
  Value *s2 = g.add_value("s2", DType::kFloat32, {});
  graph::infer_node(*g.add_node(OpKind::kAdd, "add2",
                                {m2, g.add_constant("b2", random_tensor(DType::kFloat32, {4}, 14))},
                                {s2}));
  g.add_output(s2);
  g.add_output(m2);
  EXPECT_EQ(graph::fuse_matmul_epilogues(g), 0);
}

// A batched A times a 2-D B (ViT's [197, 1, 768] x [768, 2304], ConvNeXt's [1, 56, 56, 96] x
// [96, 384]) is computed as one product of A's rows: against the reference, with B a node
// input and with B a constant (packed into panels), for batches with M of 1 and of several rows,
// and for a width of 197 (attention's tokens: a prime, so a row-wide column tile).
TEST(TransformerOps, BatchedTimesTwoDimensionalMatMulsFoldTheirBatch) {
  for (const Shape &sa : {Shape{9, 1, 20}, Shape{2, 3, 5, 20}, Shape{4, 7, 20}})
    for (int64_t n : {37, 197}) {
      const Tensor a = random_tensor(DType::kFloat32, sa, 21);
      const Tensor b = random_tensor(DType::kFloat32, {20, n}, 22);
      auto [got, want] = run_both(OpKind::kMatMul, {a, b}, DType::kFloat32);
      expect_close(got, want, 1e-5, "MatMul with B an input");
      Graph g;
      Value *x = g.add_value("x", DType::kFloat32, sa);
      g.add_input(x);
      Value *y = g.add_value("y", DType::kFloat32, {});
      graph::infer_node(*g.add_node(OpKind::kMatMul, "mm", {x, g.add_constant("b", b)}, {y}));
      g.add_output(y);
      expect_close(ops::cpu::CpuExecutor(g).run({a})[0], ReferenceExecutor(g).run({a})[0], 1e-5,
                   "MatMul with B a constant");
    }
}

}  // namespace
}  // namespace vacc::test
