// Scale alignment (graph/passes/align_scales.h): the rescaled float graph computes what the
// original does (the reference executor on both), its calibration record is what calibrating
// the rescaled graph gives (calibrate run again), every rescaled activation's range sits at
// the top of its power-of-two grid, chains that reach anything but convolutions and dense
// layers are left alone, and the int8 model is closer to the float one.
#include "vacc/graph/passes/align_scales.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "graph_builder.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/reference_executor.h"

using namespace vacc::graph;
using vacc::graph::test::add_op;
using vacc::graph::test::max_rel_diff;
using vacc::graph::test::output_sqnr_db;
using vacc::graph::test::random_floats;

namespace {

Value *clip6(Graph &g, Value *x, const std::string &name) {
  return add_op(g, OpKind::kClip, name,
                {x, g.add_constant(name + ".lo", Tensor::scalar<float>(0)),
                 g.add_constant(name + ".hi", Tensor::scalar<float>(6))});
}

// conv1 relu maxpool conv2 clip(0, 6) conv3 [+ conv1's output when `residual`] flatten dense:
// each convolution reaches only a convolution or the dense layer through homogeneous
// operators; with `residual` conv1's output also reaches an Add, which conv3's then feeds.
Graph model(bool residual = false, float w1_scale = 0.5f) {
  Graph g;
  g.name = "align";
  Value *x = g.add_value("x", DType::kFloat32, {1, 3, 8, 8});
  g.add_input(x);
  Attributes pads;
  pads.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Value *c1 = add_op(g, OpKind::kConv, "conv1",
                     {x, g.add_constant("w1", random_floats({8, 3, 3, 3}, 1, w1_scale)),
                      g.add_constant("b1", random_floats({8}, 2, 0.1f))},
                     pads);
  Value *r1 = add_op(g, OpKind::kRelu, "relu1", {c1});
  Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.set("strides", std::vector<int64_t>{2, 2});
  Value *p1 = add_op(g, OpKind::kMaxPool, "pool1", {r1}, pool);
  Value *c2 = add_op(g, OpKind::kConv, "conv2",
                     {p1, g.add_constant("w2", random_floats({8, 8, 3, 3}, 3, 0.3f)),
                      g.add_constant("b2", random_floats({8}, 4, 0.1f))},
                     pads);
  Value *k2 = clip6(g, c2, "clip2");
  Value *c3 = add_op(g, OpKind::kConv, "conv3",
                     {k2, g.add_constant("w3", random_floats({8, 8, 3, 3}, 5, 0.2f)),
                      g.add_constant("b3", random_floats({8}, 6, 0.1f))},
                     pads);
  if (residual) {
    Value *c1p = add_op(g, OpKind::kMaxPool, "pool1b", {c1}, pool);
    c3 = add_op(g, OpKind::kAdd, "add", {c3, c1p});
  }
  Value *flat = add_op(g, OpKind::kFlatten, "flat", {c3});
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  g.add_output(add_op(g, OpKind::kGemm, "fc",
                      {flat, g.add_constant("wf", random_floats({10, 128}, 7, 0.05f)),
                       g.add_constant("bf", random_floats({10}, 8, 0.1f))},
                      gemm));
  return g;
}

std::vector<std::vector<Tensor>> batches(uint32_t seed = 100) {
  std::vector<std::vector<Tensor>> out;
  for (uint32_t i = 0; i < 4; ++i) out.push_back({random_floats({1, 3, 8, 8}, seed + i, 1.0f)});
  return out;
}

const Value *value(const Graph &g, const std::string &name) {
  for (const Node *n : g.nodes())
    for (const Value *v : n->outputs)
      if (v && v->name == name) return v;
  ADD_FAILURE() << "no value " << name;
  return nullptr;
}

const Tensor &weights_of(const Graph &g, const std::string &node) {
  for (const Node *n : g.nodes())
    if (n->name == node) return *n->inputs[1]->constant;
  throw std::runtime_error("no node " + node);
}

TEST(AlignScales, FloatModelUnchangedAndRangesAtTheirGridsTop) {
  Graph original = model(), g = model();
  Calibration calib = calibrate(g, batches());
  const float before1 = calib.range(value(g, "relu1")), before2 = calib.range(value(g, "clip2"));
  EXPECT_EQ(align_scales(g, calib), 3);  // conv1, conv2, and conv3 through Flatten to the Gemm
  for (const auto &b : batches(200)) {
    std::vector<Tensor> want = ReferenceExecutor(original).run(b),
                        got = ReferenceExecutor(g).run(b);
    EXPECT_LT(max_rel_diff(got[0], want[0]), 1e-5);
  }
  // conv1's stored value is relu1's output (the Relu reads it alone); clip2's is the Clip's.
  for (const auto &[name, before] : {std::pair{"relu1", before1}, std::pair{"clip2", before2}}) {
    const float r = calib.range(value(g, name));
    const int f = frac_bits_for(before);
    EXPECT_GT(r, before) << name;
    EXPECT_EQ(frac_bits_for(r), f) << name;
    EXPECT_NEAR(r, std::ldexp(127.0, -f), 1e-4 * r) << name << ": the grid's top";
  }
  // The updated record is what calibrating the rescaled graph gives.
  Calibration again = calibrate(g, batches());
  for (const char *name : {"conv1", "relu1", "pool1", "conv2", "clip2", "conv3", "flat"}) {
    const Value *v = value(g, name);
    EXPECT_NEAR(calib.abs_max.at(v), again.abs_max.at(v), 1e-5 * again.abs_max.at(v)) << name;
    const auto &m = calib.channel_mean.at(v), &m2 = again.channel_mean.at(v);
    for (size_t c = 0; c < m.size(); ++c) EXPECT_NEAR(m[c], m2[c], 1e-5 + 1e-5 * std::abs(m2[c]));
  }
}

TEST(AlignScales, ChainsReachingAnAddOrAnOutputAreLeftAlone) {
  Graph g = model(/*residual=*/true);
  Calibration calib = calibrate(g, batches());
  const std::vector<float> w1 = weights_of(g, "conv1").to_float_vector();
  // conv1's output reaches the Add through pool1b: only conv2 is rescaled.
  EXPECT_EQ(align_scales(g, calib), 1);
  EXPECT_EQ(weights_of(g, "conv1").to_float_vector(), w1);

  // The activation is the model's output: its scale is the user's.
  Graph out = vacc::graph::test::dense_pair_with_visible_hidden(random_floats({4, 4}, 1));
  Calibration c2 = calibrate(out, {{random_floats({1, 4}, 5)}});
  EXPECT_EQ(align_scales(out, c2), 0);
}

// The int8 model against the float one on other inputs than the calibration's: with its
// activations rescaled to fill their grids, the output is closer (31.7 -> 32.6 dB here).
TEST(AlignScales, Int8CloserToFloat) {
  auto error = [](bool align) {
    Graph f = model(false, 0.5f), g = model(false, 0.5f);
    Calibration calib = calibrate(g, batches());
    if (align) EXPECT_GT(align_scales(g, calib), 0);
    quantize(g, calib);
    return output_sqnr_db(f, g, batches(300));
  };
  const double off = error(false), on = error(true);
  std::printf("output SQNR: %.2f dB rescaled, %.2f dB not\n", on, off);
  EXPECT_GT(on, off + 0.5) << "SQNR " << on << " dB rescaled, " << off << " dB not";
}

}  // namespace
