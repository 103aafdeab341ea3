// Learned weight rounding (graph/passes/learn_rounding.h): on small layers against the best
// rounding found by trying every choice of level below or above, the levels and reported errors
// against plain sums, a dense layer's output error against nearest and Hessian rounding, and
// the compile-time budget's shares against the rule written out here.
#include "vacc/graph/passes/learn_rounding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "graph_builder.h"
#include "vacc/graph/passes/quantize.h"
#include "weight_rounding_util.h"

using namespace vacc::graph;
using namespace vacc::graph::test;

namespace {

// n samples of k inputs that move together (six shared directions and a little noise), as a
// layer's inputs do.
std::vector<double> correlated_inputs(int64_t n, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(0, 1);
  std::vector<double> basis(size_t(6 * k));
  for (double &b : basis) b = d(rng);
  std::vector<double> xs(size_t(n * k));
  for (int64_t s = 0; s < n; ++s)
    for (int64_t i = 0; i < k; ++i) {
      double v = 0.3 * d(rng);
      for (int64_t b = 0; b < 6; ++b) v += basis[size_t(b * k + i)] * (d(rng) > 0 ? 1.0 : 0.5);
      xs[size_t(s * k + i)] = v;
    }
  return xs;
}

InputHessian hessian_of(const std::vector<double> &xs, int64_t k) {
  InputHessian h;
  h.k = k;
  h.h.assign(size_t(k * k), 0.0f);
  const int64_t n = int64_t(xs.size()) / k;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      double s = 0;
      for (int64_t t = 0; t < n; ++t) s += xs[size_t(t * k + i)] * xs[size_t(t * k + j)];
      h.h[size_t(i * k + j)] = float(s);
    }
  return h;
}

Tensor as_tensor(const std::vector<double> &values, int64_t n, int64_t k) {
  Tensor t(DType::kFloat32, {n, k});
  for (int64_t i = 0; i < n * k; ++i) t.data<float>()[i] = float(values[size_t(i)]);
  return t;
}

// The input Hessian that input_hessians collects for a dense layer "fc" (x W^T, W [o, k])
// over `batches` of inputs [n, k], keeping the inputs where it may.
InputHessian dense_hessian(const Tensor &w, const std::vector<std::vector<Tensor>> &batches,
                           bool keep_inputs = true) {
  const Tensor &first = batches.at(0).at(0);
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {first.dim(0), first.dim(1)});
  g.add_input(x);
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  g.add_output(add_op(g, OpKind::kGemm, "fc", {x, g.add_constant("w", w)}, gemm));
  return input_hessians(g, batches, keep_inputs).at("fc");
}

// e (H / mean(diag H) + damping I) e^T for a row's levels q against its float weights x, in
// grid steps: the objective the pass minimizes.
double row_cost(const InputHessian &h, const std::vector<double> &x, const std::vector<double> &q) {
  double trace = 0, cost = 0, damped = 0;
  for (int64_t i = 0; i < h.k; ++i) trace += h.h[size_t(i * h.k + i)];
  for (int64_t i = 0; i < h.k; ++i) {
    const double ei = q[size_t(i)] - x[size_t(i)];
    damped += kLearnedRoundingDamping * ei * ei;
    for (int64_t j = 0; j < h.k; ++j)
      cost += ei * h.h[size_t(i * h.k + j)] * (q[size_t(j)] - x[size_t(j)]);
  }
  return cost / (trace / double(h.k)) + damped;
}

// Twenty layers of four channels and 12 inputs: every channel's learned levels are the level
// below or above each weight, never cost more than nearest rounding's and, summed, close most
// of nearest rounding's distance to the best of all 2^12 choices; the reported errors are the
// channels' own.
TEST(LearnRounding, NearTheExhaustiveOptimumOnSmallLayers) {
  const int64_t k = 12, o = 4;
  double nearest_gap = 0, learned_gap = 0;
  int optimal = 0;
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const InputHessian h = hessian_of(correlated_inputs(200, k, seed), k);
    const Tensor w = random_floats({o, k}, 100 + seed, 0.3f);
    const std::vector<int> fb = channel_grids(w);
    const LearnedRounding got = learn_rounding(w, fb, h, 1000);
    ASSERT_EQ(got.channels, o);
    double reported_nearest = 0, reported = 0;
    for (int64_t r = 0; r < o; ++r) {
      std::vector<double> x(static_cast<size_t>(k)), q(x), near(x);
      for (int64_t i = 0; i < k; ++i) {
        x[size_t(i)] = std::ldexp(double(w.data<float>()[r * k + i]), fb[size_t(r)]);
        q[size_t(i)] = got.levels.data<int8_t>()[r * k + i];
        near[size_t(i)] = std::clamp(std::nearbyint(x[size_t(i)]), -128.0, 127.0);
        ASSERT_TRUE(q[size_t(i)] == std::floor(x[size_t(i)]) ||
                    q[size_t(i)] == std::ceil(x[size_t(i)]))
            << "seed " << seed << " channel " << r << " input " << i << ": " << x[size_t(i)]
            << " took level " << q[size_t(i)];
      }
      double best = INFINITY;
      std::vector<double> tried(static_cast<size_t>(k));
      for (uint32_t bits = 0; bits < (1u << k); ++bits) {
        for (int64_t i = 0; i < k; ++i)
          tried[size_t(i)] = std::floor(x[size_t(i)]) + ((bits >> i) & 1);
        best = std::min(best, row_cost(h, x, tried));
      }
      const double learned = row_cost(h, x, q), nearest = row_cost(h, x, near);
      EXPECT_LE(learned, nearest * (1 + 1e-6)) << "seed " << seed << " channel " << r;
      nearest_gap += nearest - best;
      learned_gap += learned - best;
      optimal += learned <= best * (1 + 1e-6);
      reported_nearest += nearest;
      reported += learned;
    }
    EXPECT_NEAR(got.nearest_error, reported_nearest, 1e-3 * reported_nearest) << "seed " << seed;
    EXPECT_NEAR(got.error, reported, 1e-3 * reported_nearest) << "seed " << seed;
  }
  std::printf("80 channels: distance to the optimum, nearest %.4g, learned %.4g; %d optimal\n",
              nearest_gap, learned_gap, optimal);
  EXPECT_LT(learned_gap, 0.1 * nearest_gap);
}

// Weights past the grid's ends (a grid chosen one step too fine) keep the clamped level.
TEST(LearnRounding, WeightsPastTheGridKeepItsEnds) {
  const int64_t k = 16, o = 3;
  const InputHessian h = hessian_of(correlated_inputs(100, k, 5), k);
  const Tensor w = random_floats({o, k}, 6, 0.5f);
  std::vector<int> fb = channel_grids(w);
  for (int &f : fb) ++f;
  const LearnedRounding got = learn_rounding(w, fb, h, 300);
  int clipped = 0;
  for (int64_t r = 0; r < o; ++r)
    for (int64_t i = 0; i < k; ++i) {
      const double x = std::ldexp(double(w.data<float>()[r * k + i]), fb[size_t(r)]);
      const int q = got.levels.data<int8_t>()[r * k + i];
      const double want_low = x >= 127 ? 127 : x <= -128 ? -128 : std::floor(x);
      const double want_high = x >= 127 ? 127 : x <= -128 ? -128 : std::ceil(x);
      EXPECT_TRUE(q == want_low || q == want_high) << x << " took " << q;
      clipped += x >= 127 || x <= -128;
    }
  EXPECT_GT(clipped, 0);
}

// A dense layer y = x W^T on correlated inputs, through the pass's own Hessian of the graph:
// learned rounding leaves a smaller output error on the calibration data than nearest
// rounding, and no larger than Hessian rounding's.
TEST(LearnRounding, DenseOutputErrorBelowNearestAndHessianRounding) {
  const int64_t n = 256, k = 48, o = 8;
  const Tensor xs = as_tensor(correlated_inputs(n, k, 7), n, k);
  const Tensor w = random_floats({o, k}, 9, 0.3f);
  const InputHessian h = dense_hessian(w, {{xs}});
  const std::vector<int> fb = channel_grids(w);
  const double nearest = dense_output_error(
      w, fb, xs, [&](int64_t r, int64_t i) { return nearest_level(w, fb, r, i); });
  const Tensor hq = round_weights(w, fb, h);
  const double hessian = dense_output_error(
      w, fb, xs, [&](int64_t r, int64_t i) { return double(hq.data<int8_t>()[r * k + i]); });
  const LearnedRounding lq = learn_rounding(w, fb, h, 1000);
  const double learned = dense_output_error(
      w, fb, xs, [&](int64_t r, int64_t i) { return double(lq.levels.data<int8_t>()[r * k + i]); });
  std::printf("output error: nearest %.4g, hessian %.4g, learned %.4g\n", nearest, hessian,
              learned);
  EXPECT_LT(learned, 0.8 * nearest);
  EXPECT_LE(learned, hessian);
}

// The budget in multiply-adds (seconds at the nominal rate) is shared cheapest layer first:
// each takes its share of what is left (up to the most steps), a share under the fewest steps
// leaves the layer out; what is spent stays within the budget.
TEST(LearnedRoundingSteps, SharesTheBudgetCheapestLayerFirst) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {1, 512});
  g.add_input(x);
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  // Largest first in the graph: the order of the shares is by cost, not position.
  Value *a =
      add_op(g, OpKind::kGemm, "big", {x, g.add_constant("w1", random_floats({64, 512}, 1))}, gemm);
  Value *b =
      add_op(g, OpKind::kGemm, "mid", {a, g.add_constant("w2", random_floats({32, 64}, 2))}, gemm);
  g.add_output(add_op(g, OpKind::kGemm, "small",
                      {b, g.add_constant("w3", random_floats({8, 32}, 3))}, gemm));
  InputHessians hs;
  hs["big"].k = 512;
  hs["mid"].k = 64;
  hs["small"].k = 32;
  const double big = 64.0 * 512 * 512, mid = 32.0 * 64 * 64, small = 8.0 * 32 * 32;
  for (double seconds : {10.0, 0.01, 0.002, 1e-5}) {
    double budget = seconds * kLearnedRoundingMacsPerSecond;
    std::map<std::string, int> want;
    int remaining = 3;
    for (auto [name, cost] : {std::pair{"small", small}, {"mid", mid}, {"big", big}}) {
      double fits = std::floor(budget / remaining-- / cost);
      const int n = fits < kLearnedRoundingMinSteps
                        ? 0
                        : int(std::min(fits, double(kLearnedRoundingMaxSteps)));
      if (n) want[name] = n;
      budget -= n * cost;
    }
    const auto got = learned_rounding_steps(g, hs, seconds);
    std::map<std::string, int> got_sorted(got.begin(), got.end());
    EXPECT_EQ(got_sorted, want) << seconds << " s";
    double spent = 0;
    for (const auto &[name, n] : got)
      spent += n * (name == "big" ? big : name == "mid" ? mid : small);
    EXPECT_LE(spent, seconds * kLearnedRoundingMacsPerSecond) << seconds << " s";
  }
  // 10 s: every layer its most steps; 0.01 s (40 M multiply-adds): the small and middle layers
  // only; 0.002 s: the small one only.
  EXPECT_EQ(learned_rounding_steps(g, hs, 10.0).at("big"), kLearnedRoundingMaxSteps);
  const auto some = learned_rounding_steps(g, hs, 0.01);
  EXPECT_EQ(some.count("big"), 0u);
  EXPECT_EQ(some.at("small"), kLearnedRoundingMaxSteps);
  EXPECT_GT(some.count("mid"), 0u);
  const auto few = learned_rounding_steps(g, hs, 0.002);
  EXPECT_EQ(few.size(), 1u);
  EXPECT_EQ(few.count("small"), 1u);
}

// A dense layer with fewer inputs than half its width: input_hessians keeps them (X, with
// X^T X its Hessian), and learning through them takes the same levels as through the Hessian
// (to within float rounding of the products: the same error to 0.1 %).
TEST(LearnRounding, ThroughKeptInputsAsThroughTheHessian) {
  const int64_t n = 20, k = 64, o = 6;
  const Tensor xs = as_tensor(correlated_inputs(n, k, 11), n, k);
  const Tensor w = random_floats({o, k}, 12, 0.3f);
  const InputHessian kept = dense_hessian(w, {{xs}});
  ASSERT_EQ(kept.n, n);
  ASSERT_EQ(kept.inputs.size(), size_t(n * k));
  for (int64_t i = 0; i < n * k; ++i) ASSERT_EQ(kept.inputs[size_t(i)], xs.data<float>()[i]);
  // Not asked to keep them (Hessian rounding), it keeps none.
  const InputHessian dense = dense_hessian(w, {{xs}}, /*keep_inputs=*/false);
  ASSERT_EQ(dense.n, 0);
  ASSERT_TRUE(dense.inputs.empty());
  EXPECT_EQ(dense.h, kept.h);
  const std::vector<int> fb = channel_grids(w);
  const LearnedRounding a = learn_rounding(w, fb, kept, 500), b = learn_rounding(w, fb, dense, 500);
  EXPECT_NEAR(a.error, b.error, 1e-3 * a.nearest_error);
  EXPECT_NEAR(a.nearest_error, b.nearest_error, 1e-4 * a.nearest_error);
  EXPECT_LT(a.error, 0.5 * a.nearest_error);
  // Two batches, 40 inputs, more than half the width: only the Hessian is kept.
  const InputHessian more = dense_hessian(w, {{xs}, {xs}});
  EXPECT_EQ(more.n, 0);
  EXPECT_TRUE(more.inputs.empty());
}

}  // namespace
