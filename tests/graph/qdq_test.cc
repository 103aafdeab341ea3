// Models quantized by their authors (graph/passes/quantize_qdq.h). The references are
// independent of the rewrite: exact real arithmetic for the rescaling, and the QDQ graph
// itself run by the reference executor (DequantizeLinear, the float operator, QuantizeLinear:
// ONNX's own semantics) for the rewritten patterns.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "vacc/graph/passes/constant_folding.h"
#include "vacc/graph/passes/fuse.h"
#include "vacc/graph/passes/quantize_qdq.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

using namespace vacc::graph;

namespace {

// vacc.Requantize of `acc` (one row per channel) with rescale_for(ratios), the rounding folded
// into an int32 bias as quantize_qdq does, run by the reference executor.
Tensor requantize(const Tensor &acc, const std::vector<double> &ratios, int64_t zero_point) {
  const Rescale r = rescale_for(ratios);
  const int64_t C = acc.dim(1);
  Graph g;
  Value *x = g.add_value("acc", DType::kInt32, acc.shape());
  g.add_input(x);
  Tensor bias(DType::kInt32, {C, 1});
  for (int64_t c = 0; c < C; ++c) bias.data<int32_t>()[c] = static_cast<int32_t>(r.rounding[c]);
  Value *sum = g.add_value("sum", DType::kInt32, {});
  infer_node(*g.add_node(OpKind::kAdd, "add", {x, g.add_constant("bias", bias)}, {sum}));
  Attributes a;
  a.set("shifts", r.shifts);
  a.set("multipliers", r.multipliers);
  a.set("pre_clip", r.pre_clip);
  a.set("post_shift", r.post_shift);
  a.set("zero_point", zero_point);
  Value *y = g.add_value("y", DType::kInt8, {});
  infer_node(*g.add_node(OpKind::kRequantize, "rq", {sum}, {y}, a));
  g.add_output(y);
  return ReferenceExecutor(g).run({acc})[0];
}

TEST(QdqRescale, MatchesExactRoundingAwayFromTies) {
  std::mt19937 rng(1);
  const int64_t C = 16, N = 4000;
  std::vector<double> ratios(C);
  std::uniform_real_distribution<double> log_ratio(-12, -7);
  for (double &r : ratios) r = std::exp2(log_ratio(rng));
  Tensor acc(DType::kInt32, {1, C, N});
  std::uniform_int_distribution<int32_t> any(-(1 << 30), 1 << 30);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < N; ++i) {
      // Most within the output's range, some far outside it (saturation, no overflow).
      const double span = 140 / ratios[c];
      acc.data<int32_t>()[c * N + i] =
          i % 10 ? static_cast<int32_t>(std::uniform_real_distribution<double>(-span, span)(rng))
                 : any(rng);
    }
  const int64_t zp = -17;
  const Tensor y = requantize(acc, ratios, zp);
  int64_t near_ties = 0;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < N; ++i) {
      const double exact = acc.data<int32_t>()[c * N + i] * ratios[c];
      const double want = std::clamp(std::floor(exact + 0.5) + zp, -128.0, 127.0);
      const double got = y.data<int8_t>()[c * N + i];
      const double frac = exact - std::floor(exact);
      if (std::abs(frac - 0.5) > 1.0 / 64) {
        ASSERT_EQ(got, want) << "channel " << c << " acc " << acc.data<int32_t>()[c * N + i];
      } else {
        ASSERT_LE(std::abs(got - want), 1.0);
        ++near_ties;
      }
    }
  EXPECT_LT(near_ties, C * N / 20);
}

TEST(QdqRescale, ParametersStayInTheAlusRange) {
  const Rescale r = rescale_for({1e-6, 3e-4, 0.02, 0.9, 7.5});
  EXPECT_LE(r.pre_clip, 32767);
  for (int64_t m : r.multipliers) EXPECT_LT(m * r.pre_clip, int64_t{1} << 31);
  EXPECT_GE(r.post_shift, 0);
  EXPECT_LT(r.post_shift, 32);
}

TEST(QdqRescale, RejectsAZeroRatio) {
  try {
    rescale_for({0.01, 0.0});
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_NE(std::string(e.what()).find("scale ratio 0 of output channel 1"), std::string::npos)
        << e.what();
  }
}

// A QDQ graph as ONNX Runtime writes one, built node by node.
struct QdqBuilder {
  Graph g;
  std::mt19937 rng{7};

  Value *op(OpKind kind, const std::string &name, std::vector<Value *> in, Attributes a = {}) {
    Value *out = g.add_value(name, DType::kFloat32, {});
    infer_node(*g.add_node(kind, name, std::move(in), {out}, std::move(a)));
    return out;
  }
  // Q -> DQ of a float value with one scale and zero point (uint8 or int8 codes).
  Value *qdq(Value *x, float scale, int zp, DType dtype) {
    Value *s = g.add_constant(x->name + ".s", Tensor::scalar<float>(scale));
    Value *z = g.add_constant(
        x->name + ".z", dtype == DType::kUInt8 ? Tensor::scalar<uint8_t>(static_cast<uint8_t>(zp))
                                               : Tensor::scalar<int8_t>(static_cast<int8_t>(zp)));
    Value *q = g.add_value(x->name + ".q", dtype, {});
    infer_node(*g.add_node(OpKind::kQuantizeLinear, x->name + ".Q", {x, s, z}, {q}));
    return op(OpKind::kDequantizeLinear, x->name + ".dq", {q, s, z});
  }
  // DequantizeLinear of random int8 weights [O, ...] with one scale per output channel.
  Value *weights(const std::string &name, const Shape &shape, int axis) {
    Tensor q(DType::kInt8, shape);
    std::uniform_int_distribution<int> code(-127, 127);
    for (int64_t i = 0; i < q.size(); ++i) q.data<int8_t>()[i] = static_cast<int8_t>(code(rng));
    const int64_t O = shape[axis];
    Tensor s(DType::kFloat32, {O});
    std::uniform_real_distribution<float> scale(0.001f, 0.01f);
    for (int64_t o = 0; o < O; ++o) s.data<float>()[o] = scale(rng);
    Attributes a;
    a.set("axis", int64_t{axis});
    return op(OpKind::kDequantizeLinear, name,
              {g.add_constant(name + ".q", q), g.add_constant(name + ".s", s),
               g.add_constant(name + ".z", Tensor(DType::kInt8, {O}))},
              a);
  }
  Value *bias(const std::string &name, int64_t n) {
    Tensor b(DType::kFloat32, {n});
    std::normal_distribution<float> normal(0.0f, 0.2f);
    for (int64_t i = 0; i < n; ++i) b.data<float>()[i] = normal(rng);
    return g.add_constant(name, b);
  }
  Tensor input(const Shape &shape) {
    Tensor t(DType::kFloat32, shape);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = normal(rng);
    return t;
  }
};

int count(const Graph &g, OpKind op) {
  int n = 0;
  for (const Node *node : g.nodes()) n += node->op == op;
  return n;
}

// The rewritten graph against the QDQ graph's own semantics: the output codes. One layer
// (`layers` = 1) differs only near rounding ties: one output step at most, on a few codes;
// after several, such a difference in one layer's output can move the next layer's by a step
// too, so they get `layers` steps and a fifth of the codes. `build` makes the QDQ graph (twice:
// one is rewritten).
void expect_same_codes(const std::function<void(QdqBuilder &)> &build, const Shape &in_shape,
                       float out_scale, int expect_pads, int layers = 1) {
  QdqBuilder qdq, ints;
  build(qdq);
  build(ints);
  ASSERT_TRUE(has_qdq(ints.g));
  EXPECT_GT(quantize_qdq(ints.g), 0);
  fold_constants(ints.g);
  fuse(ints.g);
  EXPECT_EQ(count(ints.g, OpKind::kConv) + count(ints.g, OpKind::kGemm) +
                count(ints.g, OpKind::kMatMul),
            0)
      << "every accumulating operator runs in integers";
  EXPECT_EQ(count(ints.g, OpKind::kPad), expect_pads);
  const Tensor x = qdq.input(in_shape);
  const Tensor want = ReferenceExecutor(qdq.g).run({x})[0];
  const Tensor got = ReferenceExecutor(ints.g).run({x})[0];
  ASSERT_EQ(got.shape(), want.shape());
  int64_t differ = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    const double d = std::abs(got.as_double(i) - want.as_double(i));
    ASSERT_LE(d, layers * out_scale * 1.001) << "element " << i;
    differ += d > 0;
  }
  EXPECT_LE(differ, want.size() / (layers == 1 ? 50 : 5))
      << differ << " of " << want.size() << " codes differ";
}

// Conv (padded, uint8 input with a zero point: an explicit Pad) -> Relu -> MaxPool -> Conv
// (uint8 after the Relu, zero point 0, i.e. int8 code -128: padded explicitly too) -> Flatten
// -> Gemm (transB) -> output, every activation behind Q/DQ as ONNX Runtime places them.
TEST(QuantizeQdq, CnnMatchesTheQdqGraph) {
  expect_same_codes(
      [](QdqBuilder &b) {
        Graph &g = b.g;
        Value *x = g.add_value("x", DType::kFloat32, {2, 3, 10, 10});
        g.add_input(x);
        Attributes conv;
        conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
        conv.set("kernel_shape", std::vector<int64_t>{3, 3});
        Value *c1 = b.op(OpKind::kConv, "c1",
                         {b.qdq(x, 0.02f, 120, DType::kUInt8), b.weights("w1", {8, 3, 3, 3}, 0),
                          b.bias("b1", 8)},
                         conv);
        Value *r1 = b.qdq(b.op(OpKind::kRelu, "r1", {c1}), 0.01f, 0, DType::kUInt8);
        Attributes pool;
        pool.set("kernel_shape", std::vector<int64_t>{2, 2});
        pool.set("strides", std::vector<int64_t>{2, 2});
        Value *p1 = b.qdq(b.op(OpKind::kMaxPool, "p1", {r1}, pool), 0.01f, 0, DType::kUInt8);
        Value *c2 = b.op(OpKind::kConv, "c2",
                         {p1, b.weights("w2", {16, 8, 3, 3}, 0), b.bias("b2", 16)}, conv);
        Value *q2 = b.qdq(c2, 0.015f, 0, DType::kInt8);
        Value *f = b.qdq(b.op(OpKind::kFlatten, "f", {q2}), 0.015f, 0, DType::kInt8);
        Attributes gemm;
        gemm.set("transB", int64_t{1});
        Value *d =
            b.op(OpKind::kGemm, "d", {f, b.weights("w3", {10, 400}, 0), b.bias("b3", 10)}, gemm);
        g.add_output(b.qdq(d, 0.05f, 3, DType::kInt8));
      },
      {2, 3, 10, 10}, 0.05f, 2, /*layers=*/3);
}

// One padded convolution of uint8 codes with a zero point: padded explicitly, exact but near
// ties.
TEST(QuantizeQdq, PaddedConvWithZeroPoint) {
  expect_same_codes(
      [](QdqBuilder &b) {
        Graph &g = b.g;
        Value *x = g.add_value("x", DType::kFloat32, {1, 3, 9, 9});
        g.add_input(x);
        Attributes conv;
        conv.set("pads", std::vector<int64_t>{1, 2, 1, 2});
        conv.set("strides", std::vector<int64_t>{2, 1});
        Value *c = b.op(OpKind::kConv, "c",
                        {b.qdq(x, 0.02f, 100, DType::kUInt8), b.weights("w", {16, 3, 3, 3}, 0),
                         b.bias("b", 16)},
                        conv);
        g.add_output(b.qdq(c, 0.03f, 130, DType::kUInt8));
      },
      {1, 3, 9, 9}, 0.03f, 1);
}

// Symmetric int8 activations (zero point 0, TensorRT's convention): the accelerator's zero
// padding is the model's, no Pad.
TEST(QuantizeQdq, SymmetricConvNeedsNoPad) {
  expect_same_codes(
      [](QdqBuilder &b) {
        Graph &g = b.g;
        Value *x = g.add_value("x", DType::kFloat32, {1, 4, 8, 8});
        g.add_input(x);
        Attributes conv;
        conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
        Value *c = b.op(OpKind::kConv, "c",
                        {b.qdq(x, 0.03f, 0, DType::kInt8), b.weights("w", {16, 4, 3, 3}, 0),
                         b.bias("b", 16)},
                        conv);
        g.add_output(b.qdq(b.op(OpKind::kRelu, "r", {c}), 0.02f, -128, DType::kInt8));
      },
      {1, 4, 8, 8}, 0.02f, 0);
}

// A MatMul whose bias is the Add after it (as PyTorch exports nn.Linear on 2-D inputs without
// Gemm), int8 codes with zero points.
TEST(QuantizeQdq, MatMulWithAddedBias) {
  expect_same_codes(
      [](QdqBuilder &b) {
        Graph &g = b.g;
        Value *x = g.add_value("x", DType::kFloat32, {4, 32});
        g.add_input(x);
        Value *mm = b.op(OpKind::kMatMul, "mm",
                         {b.qdq(x, 0.03f, -5, DType::kInt8), b.weights("w", {32, 24}, 1)});
        Value *add = b.op(OpKind::kAdd, "add", {mm, b.bias("bias", 24)});
        g.add_output(b.qdq(add, 0.04f, 7, DType::kInt8));
      },
      {4, 32}, 0.04f, 0);
}

// What the rewrite does not take stays the model's own float QDQ form.
TEST(QuantizeQdq, OtherOperatorsKeepTheirFloatForm) {
  auto build = [](QdqBuilder &b) {
    Graph &g = b.g;
    Value *x = g.add_value("x", DType::kFloat32, {1, 4, 6, 6});
    g.add_input(x);
    Value *gap = b.op(OpKind::kGlobalAveragePool, "gap", {b.qdq(x, 0.02f, 0, DType::kInt8)});
    g.add_output(b.qdq(gap, 0.01f, 0, DType::kInt8));
  };
  QdqBuilder qdq, ints;
  build(qdq);
  build(ints);
  EXPECT_EQ(quantize_qdq(ints.g), 0);
  EXPECT_EQ(count(ints.g, OpKind::kGlobalAveragePool), 1);
  const Tensor in = qdq.input({1, 4, 6, 6});
  const Tensor want = ReferenceExecutor(qdq.g).run({in})[0],
               got = ReferenceExecutor(ints.g).run({in})[0];
  ASSERT_EQ(want.nbytes(), got.nbytes());
  EXPECT_EQ(std::memcmp(want.raw(), got.raw(), want.nbytes()), 0);
}

}  // namespace
