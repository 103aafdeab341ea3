// Single operators through the CPU executor against the graph reference executor on seeded
// random data: vacc's integer operators bit-exact (per-channel shifts, partial bias, clips,
// the QAdd shifts), and float convolutions and matrix products of awkward shapes (tiles that
// do not divide, strides, groups) to 1e-5.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "ops_test_util.h"
#include "vacc/graph/graph.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/ops/cpu/executor.h"

using namespace vacc::graph;

namespace {

using vacc::test::compare;
using vacc::test::random_tensor;
using vacc::test::run_both;

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

// The composed functions (tanh from exp, erf as a rational approximation) over their whole
// useful range, tiny arguments included, to a few float32 ulps of the reference's libm (and
// HardSwish/HardSigmoid, computed in float32 as ONNX's, to the rounding of x / 6 + 0.5).
TEST(CpuOps, ComposedMathFunctionsMatchTheReferenceOverTheirRange) {
  std::vector<float> xs;
  for (int i = -4000; i <= 4000; ++i) xs.push_back(i * 0.002f);
  for (float t : {1e-7f, 3e-5f, 1e-3f, 20.0f, 90.0f}) {
    xs.push_back(t);
    xs.push_back(-t);
  }
  const Tensor x = Tensor::from_vector<float>({static_cast<int64_t>(xs.size())}, xs);
  for (OpKind op : {OpKind::kTanh, OpKind::kErf, OpKind::kHardSwish, OpKind::kHardSigmoid}) {
    auto [got, want] = run_both(op, {x}, DType::kFloat32);
    for (int64_t i = 0; i < x.size(); ++i) {
      const double w = want.as_double(i);
      ASSERT_NEAR(got.as_double(i), w, 4e-7 * std::abs(w) + 2e-8 * std::abs(xs[i]))
          << op_name(op) << "(" << xs[i] << ")";
    }
  }
}

// Pow: positive bases to fractional powers, negative bases to integer powers (odd ones
// negative), 0 ** 0, and integer powers exact.
TEST(CpuOps, PowMatchesTheReferenceAcrossSignsAndTypes) {
  const Tensor a =
      Tensor::from_vector<float>({8}, {0.5f, 3.0f, -2.0f, -2.0f, 0.0f, 0.0f, 7.5f, -1.5f});
  const Tensor b =
      Tensor::from_vector<float>({8}, {2.5f, -1.25f, 3.0f, 4.0f, 0.0f, 2.0f, 0.5f, 2.0f});
  auto [got, want] = run_both(OpKind::kPow, {a, b}, DType::kFloat32);
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_NEAR(got.as_double(i), want.as_double(i), 1e-6 * std::abs(want.as_double(i)));
  EXPECT_FLOAT_EQ(got.as_double(2), -8.0f);
  EXPECT_FLOAT_EQ(got.as_double(4), 1.0f);
  const Tensor ia = Tensor::from_vector<int64_t>({5}, {2, -3, 10, 7, -1});
  const Tensor ib = Tensor::from_vector<int64_t>({5}, {10, 3, 9, 0, 5});
  auto [igot, iwant] = run_both(OpKind::kPow, {ia, ib}, DType::kInt64);
  EXPECT_EQ(igot.to_int_vector(), (std::vector<int64_t>{1024, -27, 1000000000, 1, -1}));
  EXPECT_EQ(iwant.to_int_vector(), igot.to_int_vector());
}

}  // namespace
