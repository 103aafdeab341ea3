// Cross-layer equalization (graph/passes/equalize_channels.h): the equalized float graph
// computes what the original does (the reference executor on both), each channel's factor is
// the documented balance of its activation range and its readers' weights (measured here on
// the original graph), chains that reach an Add, an output or a ReLU6 are left alone, and the
// int8 model of a network with unbalanced channels is closer to the float one.
#include "vacc/graph/passes/equalize_channels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "graph_builder.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/reference_executor.h"

using namespace vacc::graph;
using vacc::graph::test::add_op;
using vacc::graph::test::dense_pair_with_visible_hidden;
using vacc::graph::test::max_rel_diff;
using vacc::graph::test::output_sqnr_db;
using vacc::graph::test::random_floats;

namespace {

// Weights whose output channel c is scaled by 2^(c - channels / 2): channels of very different
// ranges, as a trained network's BatchNorm folding leaves them.
Tensor unbalanced(Shape shape, uint32_t seed, float scale) {
  Tensor t = random_floats(shape, seed, scale);
  const int64_t per = t.size() / shape[0];
  for (int64_t k = 0; k < t.size(); ++k)
    t.data<float>()[k] *= std::ldexp(1.0f, int(k / per) - int(shape[0] / 2));
  return t;
}

Attributes conv_attrs(int64_t group = 1) {
  Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  if (group > 1) a.set("group", group);
  return a;
}

// conv1 relu maxpool dwconv (depthwise) Clip(0) conv3 (two groups) relu avgpool flatten dense:
// conv1's, dwconv's and conv3's outputs reach only the next layer; [with `residual`, conv1's
// output also reaches an Add; with `relu6`, conv1's Relu is a Clip(0, 6)].
Graph model(bool residual = false, bool relu6 = false) {
  Graph g;
  g.name = "equalize";
  Value *x = g.add_value("x", DType::kFloat32, {1, 3, 8, 8});
  g.add_input(x);
  Value *c1 = add_op(g, OpKind::kConv, "conv1",
                     {x, g.add_constant("w1", unbalanced({8, 3, 3, 3}, 1, 0.5f)),
                      g.add_constant("b1", random_floats({8}, 2, 0.1f))},
                     conv_attrs());
  Value *r1 = relu6 ? add_op(g, OpKind::kClip, "relu1",
                             {c1, g.add_constant("lo", Tensor::scalar<float>(0)),
                              g.add_constant("hi", Tensor::scalar<float>(6))})
                    : add_op(g, OpKind::kRelu, "relu1", {c1});
  Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.set("strides", std::vector<int64_t>{2, 2});
  Value *p1 = add_op(g, OpKind::kMaxPool, "pool1", {r1}, pool);
  Value *c2 = add_op(g, OpKind::kConv, "dwconv",
                     {p1, g.add_constant("w2", unbalanced({8, 1, 3, 3}, 3, 0.5f)),
                      g.add_constant("b2", random_floats({8}, 4, 0.1f))},
                     conv_attrs(8));
  Value *k2 = add_op(g, OpKind::kClip, "clip2",
                     {c2, g.add_constant("lo2", Tensor::scalar<float>(0)), nullptr});
  Value *c3 = add_op(g, OpKind::kConv, "conv3",
                     {k2, g.add_constant("w3", unbalanced({6, 4, 3, 3}, 5, 0.3f)),
                      g.add_constant("b3", random_floats({6}, 6, 0.1f))},
                     conv_attrs(2));
  if (residual) {
    Value *side = add_op(g, OpKind::kConv, "side",
                         {p1, g.add_constant("ws", random_floats({6, 8, 1, 1}, 9, 0.3f))});
    c3 = add_op(g, OpKind::kAdd, "add", {c3, side});
  }
  Value *r3 = add_op(g, OpKind::kRelu, "relu3", {c3});
  Value *avg = add_op(g, OpKind::kAveragePool, "pool3", {r3}, pool);
  Value *flat = add_op(g, OpKind::kFlatten, "flat", {avg});
  g.add_output(add_op(g, OpKind::kGemm, "fc",
                      {flat, g.add_constant("wf", random_floats({24, 10}, 7, 0.1f)),
                       g.add_constant("bf", random_floats({10}, 8, 0.1f))}));
  return g;
}

std::vector<std::vector<Tensor>> batches(uint32_t seed = 100) {
  std::vector<std::vector<Tensor>> out;
  for (uint32_t i = 0; i < 4; ++i) out.push_back({random_floats({1, 3, 8, 8}, seed + i, 1.0f)});
  return out;
}

const Node &node(const Graph &g, const std::string &name) {
  for (const Node *n : g.nodes())
    if (n->name == name) return *n;
  throw std::runtime_error("no node " + name);
}

std::vector<float> weights(const Graph &g, const std::string &name) {
  return node(g, name).inputs[1]->constant->to_float_vector();
}

TEST(EqualizeChannels, FloatModelUnchanged) {
  Graph original = model(), g = model();
  EXPECT_EQ(equalize_channels(g, batches()), 3);  // conv1, dwconv, conv3 (through the Flatten)
  EXPECT_NE(weights(g, "conv1"), weights(original, "conv1"));
  EXPECT_NE(weights(g, "fc"), weights(original, "fc"));
  for (const auto &b : batches(200)) {
    Tensor want = ReferenceExecutor(original).run(b)[0], got = ReferenceExecutor(g).run(b)[0];
    EXPECT_LT(max_rel_diff(got, want), 1e-5);
  }
}

// conv1's factors, read back from its weights, are sqrt(w_c / a_c) times one constant that
// keeps the largest channel's range: a_c is relu1's and pool1's largest magnitude in channel c
// on the original graph, w_c the depthwise reader's largest weight on channel c relative to
// its output row's largest (the same row here).
TEST(EqualizeChannels, FactorsBalanceActivationAgainstWeights) {
  Graph original = model(), g = model();
  std::vector<double> act(8, 0.0);
  for (const auto &b : batches())
    ReferenceExecutor(original).run(b, [&](const Value &v, const Tensor &t) {
      if (v.name != "relu1" && v.name != "pool1") return;
      const int64_t hw = t.dim(2) * t.dim(3);
      for (int64_t k = 0; k < t.size(); ++k)
        act[k / hw % 8] = std::max(act[k / hw % 8], std::abs(t.as_double(k)));
    });
  std::vector<double> want(8);
  double top = 0, top_after = 0;
  for (int c = 0; c < 8; ++c) {
    want[c] = std::sqrt(1.0 / act[c]);  // each depthwise row reads one channel: w_c = 1
    top = std::max(top, act[c]);
    top_after = std::max(top_after, act[c] * want[c]);
  }
  equalize_channels(g, batches());
  const std::vector<float> before = weights(original, "conv1"), after = weights(g, "conv1");
  for (int c = 0; c < 8; ++c) {
    const double expect =
        std::clamp(want[c] * top / top_after, 1 / kMaxEqualizeFactor, kMaxEqualizeFactor);
    EXPECT_NEAR(after[c * 27] / before[c * 27], expect, 1e-4 * expect) << "channel " << c;
  }
  // Each channel's range is now sqrt(a_c) times one constant: their spread is the square
  // root of what it was (no factor reached the clamp here).
  std::vector<double> now(8, 0.0);
  for (const auto &b : batches())
    ReferenceExecutor(g).run(b, [&](const Value &v, const Tensor &t) {
      if (v.name != "relu1") return;
      const int64_t hw = t.dim(2) * t.dim(3);
      for (int64_t k = 0; k < t.size(); ++k)
        now[k / hw % 8] = std::max(now[k / hw % 8], std::abs(t.as_double(k)));
    });
  auto spread = [](const std::vector<double> &r) {
    return *std::max_element(r.begin(), r.end()) / *std::min_element(r.begin(), r.end());
  };
  EXPECT_GT(spread(act), 100.0);
  EXPECT_NEAR(spread(now), std::sqrt(spread(act)), 1e-3 * std::sqrt(spread(act)));
  EXPECT_NEAR(*std::max_element(now.begin(), now.end()), top, 1e-4 * top);
}

TEST(EqualizeChannels, ChainsReachingAnAddAnOutputOrAReLU6AreLeftAlone) {
  {
    Graph g = model(/*residual=*/true);
    const std::vector<float> w1 = weights(g, "conv1"), w3 = weights(g, "conv3");
    // pool1 reaches the side convolution too (a reader): conv1 and dwconv are equalized;
    // conv3's output reaches the Add.
    EXPECT_EQ(equalize_channels(g, batches()), 2);
    EXPECT_NE(weights(g, "conv1"), w1);
    const std::vector<float> w3_after = weights(g, "conv3");
    // conv3's rows are unchanged but for its input channels' factors (dwconv's): rows 1 and 2
    // read channel 0 of the first group at weight 0 as row 0 does, by the same factor.
    for (size_t k : {36, 72})
      EXPECT_NEAR(w3_after[k] / w3[k], w3_after[0] / w3[0], 1e-4 * std::abs(w3_after[0] / w3[0]));
  }
  {
    Graph g = model(false, /*relu6=*/true);
    const std::vector<float> w1 = weights(g, "conv1");
    EXPECT_EQ(equalize_channels(g, batches()), 2);  // dwconv and conv3, not conv1
    EXPECT_EQ(weights(g, "conv1"), w1);
  }
  {
    // fc1's output is the model's output too: its values are the user's.
    Graph g = dense_pair_with_visible_hidden(unbalanced({4, 4}, 1, 1.0f));
    EXPECT_EQ(equalize_channels(g, {{random_floats({1, 4}, 5)}}), 0);
  }
}

// The int8 model against the float one on other inputs than the calibration's: with channels
// 2^7 apart in range, per-tensor activations leave the small channels few levels; equalized,
// the output is closer.
TEST(EqualizeChannels, Int8CloserToFloat) {
  auto sqnr = [](bool equalize) {
    Graph f = model(), g = model();
    if (equalize) EXPECT_GT(equalize_channels(g, batches()), 0);
    quantize(g, calibrate(g, batches()));
    return output_sqnr_db(f, g, batches(300));
  };
  const double off = sqnr(false), on = sqnr(true);
  std::printf("output SQNR: %.2f dB equalized, %.2f dB not\n", on, off);
  EXPECT_GT(on, off + 1.0) << "SQNR " << on << " dB equalized, " << off << " dB not";
}

}  // namespace
