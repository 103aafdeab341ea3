// The float Conv and MaxPool schedules chosen for whole models, against the graph reference
// executor on seeded random data (to 1e-5 of the output's largest magnitude): convolutions
// with output channels in the vectors and host-packed weight panels (strided, pointwise,
// narrow, dilated, padded asymmetrically, with and without bias, widths and channel counts
// the register tile does not divide, fused activations in both schedules; each case checks
// that the
// schedule it means to test is the one chosen) and MaxPool without Indices as one vectorized
// expression (strides, pads, dilation, ceil_mode; strided columns read through phases).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "vacc/graph/graph.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/ops/cpu/executor.h"
#include "vacc/ops/cpu/ops.h"

using namespace vacc::graph;

namespace {

Tensor random_floats(Shape shape, unsigned seed) {
  Tensor t(DType::kFloat32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

void expect_matches_reference(const Graph &g) {
  std::vector<Tensor> inputs = {random_floats(g.inputs()[0]->shape, 5)};
  Tensor want = ReferenceExecutor(g).run(inputs)[0];
  Tensor got = vacc::ops::cpu::CpuExecutor(g).run(inputs)[0];
  ASSERT_EQ(got.shape(), want.shape());
  double ref = 0;
  for (int64_t i = 0; i < want.size(); ++i) ref = std::max(ref, std::abs(want.as_double(i)));
  for (int64_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got.as_double(i), want.as_double(i), 1e-5 * ref) << "element " << i;
}

int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                   bool ceil_mode = false) {
  int64_t span = in + pb + pe - d * (k - 1) - 1;
  return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

struct ConvCase {
  const char *name;
  int64_t c, m, h, w, k, stride, dilation;
  std::vector<int64_t> pads;           // top, left, bottom, right
  bool bias, channel_tiled;            // whether the output-channel tile schedule is expected
  std::vector<float> activation = {};  // fused bounds (passes/fuse_activations.h): min[, max]
};

class FloatConv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(FloatConv, MatchesTheReference) {
  const ConvCase &p = GetParam();
  Graph g;
  int64_t oh = out_extent(p.h, p.k, p.stride, p.dilation, p.pads[0], p.pads[2]);
  int64_t ow = out_extent(p.w, p.k, p.stride, p.dilation, p.pads[1], p.pads[3]);
  Value *x = g.add_value("x", DType::kFloat32, {2, p.c, p.h, p.w});
  Value *w = g.add_constant("w", random_floats({p.m, p.c, p.k, p.k}, 7));
  std::vector<Value *> ins = {x, w};
  if (p.bias) ins.push_back(g.add_constant("b", random_floats({p.m}, 8)));
  Value *y = g.add_value("y", DType::kFloat32, {2, p.m, oh, ow});
  g.add_input(x);
  Attributes at;
  at.set("strides", std::vector<int64_t>{p.stride, p.stride});
  at.set("dilations", std::vector<int64_t>{p.dilation, p.dilation});
  at.set("pads", p.pads);
  if (!p.activation.empty()) at.set("activation_min", p.activation[0]);
  if (p.activation.size() > 1) at.set("activation_max", p.activation[1]);
  Node *node = g.add_node(OpKind::kConv, "conv", ins, {y}, at);
  g.add_output(y);
  bool tiled = false;
  for (const auto &b : vacc::ops::cpu::build_kernel(*node).func.params)
    tiled |= b->name == "w_panels";
  EXPECT_EQ(tiled, p.channel_tiled);
  expect_matches_reference(g);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, FloatConv,
    ::testing::Values(
        ConvCase{"stride2_3x3_v32", 16, 64, 28, 28, 3, 2, 1, {1, 1, 1, 1}, true, true},
        ConvCase{"stem_7x7_stride2", 3, 32, 40, 40, 7, 2, 1, {3, 3, 3, 3}, true, true},
        ConvCase{"narrow_3x3_v16_asym", 24, 48, 13, 13, 3, 1, 1, {1, 0, 0, 1}, false, true},
        ConvCase{"pointwise_narrow", 40, 32, 9, 28, 1, 1, 1, {0, 0, 0, 0}, true, true},
        ConvCase{
            "pointwise_wide_column_schedule", 40, 32, 9, 56, 1, 1, 1, {0, 0, 0, 0}, true, false},
        ConvCase{"dilated_14", 8, 16, 18, 18, 3, 1, 2, {0, 0, 0, 0}, true, true},
        ConvCase{"wide_stride1_column_schedule", 8, 32, 6, 56, 3, 1, 1, {1, 1, 1, 1}, true, false},
        ConvCase{"padded_width_109", 3, 32, 223, 223, 7, 2, 1, {0, 0, 0, 0}, true, true},
        ConvCase{"padded_channels_1000", 16, 1000, 13, 13, 1, 1, 1, {0, 0, 0, 0}, true, true},
        ConvCase{"padded_channels_24_width_13", 8, 24, 25, 25, 3, 2, 1, {1, 1, 1, 1}, false, true},
        ConvCase{"fused_relu6_channel_tile",
                 16,
                 32,
                 14,
                 14,
                 3,
                 1,
                 1,
                 {1, 1, 1, 1},
                 true,
                 true,
                 {0.0f, 0.25f}},
        ConvCase{"fused_relu_column_schedule",
                 8,
                 32,
                 6,
                 56,
                 3,
                 1,
                 1,
                 {1, 1, 1, 1},
                 true,
                 false,
                 {0.0f}}),
    [](const auto &info) { return std::string(info.param.name); });

struct PoolCase {
  const char *name;
  int64_t h, w, k, stride, dilation;
  std::vector<int64_t> pads;
  bool ceil_mode;
};

class FloatMaxPool : public ::testing::TestWithParam<PoolCase> {};

TEST_P(FloatMaxPool, MatchesTheReference) {
  const PoolCase &p = GetParam();
  Graph g;
  int64_t oh = out_extent(p.h, p.k, p.stride, p.dilation, p.pads[0], p.pads[2], p.ceil_mode);
  int64_t ow = out_extent(p.w, p.k, p.stride, p.dilation, p.pads[1], p.pads[3], p.ceil_mode);
  Value *x = g.add_value("x", DType::kFloat32, {2, 5, p.h, p.w});
  Value *y = g.add_value("y", DType::kFloat32, {2, 5, oh, ow});
  g.add_input(x);
  Attributes at;
  at.set("kernel_shape", std::vector<int64_t>{p.k, p.k});
  at.set("strides", std::vector<int64_t>{p.stride, p.stride});
  at.set("dilations", std::vector<int64_t>{p.dilation, p.dilation});
  at.set("pads", p.pads);
  at.set("ceil_mode", int64_t{p.ceil_mode});
  g.add_node(OpKind::kMaxPool, "pool", {x}, {y}, at);
  g.add_output(y);
  expect_matches_reference(g);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, FloatMaxPool,
    ::testing::Values(PoolCase{"resnet_stem", 112, 112, 3, 2, 1, {1, 1, 1, 1}, false},
                      PoolCase{"ceil_mode_squeezenet", 109, 109, 3, 2, 1, {0, 0, 0, 0}, true},
                      PoolCase{"dilated_asym_pads", 17, 23, 2, 1, 2, {1, 0, 0, 1}, false},
                      PoolCase{"stride3_dilated_phases", 20, 31, 3, 3, 2, {1, 2, 0, 1}, false}),
    [](const auto &info) { return std::string(info.param.name); });

}  // namespace
