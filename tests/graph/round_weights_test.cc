// Hessian-guided weight rounding (graph/passes/round_weights.h): the input Hessians against sums
// computed here in plain loops (a grouped, strided, padded convolution and a dense layer), and
// the rounding against nearest rounding on the layer's own error on the calibration data, every
// weight on its channel's grid.
#include "vacc/graph/passes/round_weights.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "graph_builder.h"
#include "vacc/graph/passes/quantize.h"
#include "weight_rounding_util.h"

using namespace vacc::graph;
using namespace vacc::graph::test;

namespace {

TEST(InputHessians, GroupedConvolutionEqualsPlainSums) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {2, 4, 7, 6});
  g.add_input(x);
  Attributes a;
  a.set("group", int64_t{2});
  a.set("strides", std::vector<int64_t>{2, 1});
  a.set("pads", std::vector<int64_t>{1, 0, 1, 1});
  // No kernel_shape: taken from the weights, as ONNX allows.
  g.add_output(add_op(g, OpKind::kConv, "conv",
                      {x, g.add_constant("w", random_floats({6, 2, 3, 2}, 1))}, a));
  const Tensor in = random_floats({2, 4, 7, 6}, 2);
  const InputHessians hs = input_hessians(g, {{in}});
  ASSERT_EQ(hs.count("conv"), 1u);
  const InputHessian &h = hs.at("conv");
  ASSERT_EQ(h.groups, 2);
  ASSERT_EQ(h.k, 2 * 3 * 2);
  const int64_t oh = (7 + 2 - 3) / 2 + 1, ow = (6 + 1 - 2) / 1 + 1;
  auto tap = [&](int64_t n, int64_t grp, int64_t f, int64_t oy, int64_t ox) -> double {
    const int64_t c = grp * 2 + f / 6, ky = (f / 2) % 3, kx = f % 2;
    const int64_t y = oy * 2 + ky - 1, xx = ox + kx;
    if (y < 0 || y >= 7 || xx < 0 || xx >= 6) return 0;
    return in.data<float>()[((n * 4 + c) * 7 + y) * 6 + xx];
  };
  for (int64_t grp = 0; grp < 2; ++grp)
    for (int64_t i = 0; i < h.k; ++i)
      for (int64_t j = 0; j < h.k; ++j) {
        double want = 0;
        for (int64_t n = 0; n < 2; ++n)
          for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox)
              want += tap(n, grp, i, oy, ox) * tap(n, grp, j, oy, ox);
        EXPECT_NEAR(h.h[size_t((grp * h.k + i) * h.k + j)], want, 1e-4 * (1 + std::abs(want)))
            << "group " << grp << " (" << i << ", " << j << ")";
      }
}

// A dense layer y = x W^T on correlated inputs (as a layer's inputs are): rounding with the
// Hessian leaves a smaller output error on the calibration data than nearest rounding, with
// every weight a level of its row's grid.
TEST(RoundWeights, DenseOutputErrorBelowNearestRounding) {
  const int64_t n = 256, k = 48, o = 8;
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0, 1);
  std::vector<float> basis(size_t(6 * k));
  for (float &b : basis) b = d(rng);
  Tensor xs(DType::kFloat32, {n, k});
  for (int64_t s = 0; s < n; ++s)
    for (int64_t i = 0; i < k; ++i) {
      float v = 0.3f * d(rng);
      for (int64_t b = 0; b < 6; ++b) v += basis[size_t(b * k + i)] * (d(rng) > 0 ? 1.0f : 0.5f);
      xs.data<float>()[s * k + i] = v;
    }
  const Tensor w = random_floats({o, k}, 9, 0.3f);
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {n, k});
  g.add_input(x);
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  g.add_output(add_op(g, OpKind::kGemm, "fc", {x, g.add_constant("w", w)}, gemm));
  const InputHessians hs = input_hessians(g, {{xs}});
  ASSERT_EQ(hs.count("fc"), 1u);
  const std::vector<int> fb = channel_grids(w);
  const Tensor q = round_weights(w, fb, hs.at("fc"));
  const double nearest = dense_output_error(
      w, fb, xs, [&](int64_t r, int64_t i) { return nearest_level(w, fb, r, i); });
  const double hessian = dense_output_error(
      w, fb, xs, [&](int64_t r, int64_t i) { return double(q.data<int8_t>()[r * k + i]); });
  std::printf("output error: nearest %.4g, hessian %.4g\n", nearest, hessian);
  EXPECT_LT(hessian, 0.8 * nearest);
}

}  // namespace
