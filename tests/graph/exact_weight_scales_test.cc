// Exact weight scales (QuantizeOptions::exact_weight_scales, docs/quantization.md): each output
// channel's weights take the grid its largest magnitude fills, and the requantization multiplies
// by the ratio of scales (shift, clip, multiplier, post shift). Checked against the float graph
// on the reference executor: every channel's largest weight is level 127, the int8 graph's
// output is closer to the float one than with power-of-two weight scales, and the unsigned
// levels after a Relu keep their zero point.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "graph_builder.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/reference_executor.h"

using namespace vacc::graph;
using vacc::graph::test::add_op;
using vacc::graph::test::random_floats;

namespace {

// Weights [out, in, k, k] whose channel o has largest magnitude scale * 2^(o % 5) * 1.05..1.95:
// channel ranges spread over octaves and over the places within one, as trained layers have.
Tensor spread_weights(Shape shape, uint32_t seed, float scale) {
  Tensor w = random_floats(shape, seed, 1.0f);
  const int64_t O = shape[0], inner = w.size() / O;
  for (int64_t o = 0; o < O; ++o) {
    float m = 0;
    for (int64_t i = 0; i < inner; ++i) m = std::max(m, std::abs(w.data<float>()[o * inner + i]));
    const float want = scale * std::ldexp(1.05f + 0.9f * float((o * 7) % 11) / 10.0f, int(o % 5));
    for (int64_t i = 0; i < inner; ++i) w.data<float>()[o * inner + i] *= want / m;
  }
  return w;
}

Tensor conv1_weights() {
  return spread_weights({16, 8, 3, 3}, 1, 0.05f);
}

// conv1 (3x3, padded) relu1 -> conv2 (1x1) relu2 -> flatten -> fc. relu1 reaches only the
// unpadded conv2: its levels are unsigned.
Graph model() {
  Graph g;
  g.name = "exact";
  Value *x = g.add_value("x", DType::kFloat32, {1, 8, 6, 6});
  g.add_input(x);
  Attributes pad;
  pad.set("pads", std::vector<int64_t>(4, 1));
  Value *c1 = add_op(g, OpKind::kConv, "conv1",
                     {x, g.add_constant("conv1.w", conv1_weights()),
                      g.add_constant("conv1.b", random_floats({16}, 2, 0.1f))},
                     pad);
  Value *r1 = add_op(g, OpKind::kRelu, "relu1", {c1});
  Value *c2 = add_op(g, OpKind::kConv, "conv2",
                     {r1, g.add_constant("conv2.w", spread_weights({16, 16, 1, 1}, 3, 0.04f)),
                      g.add_constant("conv2.b", random_floats({16}, 4, 0.1f))});
  Value *r2 = add_op(g, OpKind::kRelu, "relu2", {c2});
  Value *flat = add_op(g, OpKind::kFlatten, "flat", {r2});
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  g.add_output(add_op(g, OpKind::kGemm, "fc",
                      {flat, g.add_constant("fc.w", spread_weights({10, 576}, 5, 0.02f)),
                       g.add_constant("fc.b", random_floats({10}, 6, 0.1f))},
                      gemm));
  return g;
}

std::vector<std::vector<Tensor>> batches(uint32_t seed, int n) {
  std::vector<std::vector<Tensor>> out;
  for (int i = 0; i < n; ++i) out.push_back({random_floats({1, 8, 6, 6}, seed + i, 1.0f)});
  return out;
}

Graph quantized(bool exact) {
  Graph g = model();
  QuantizeOptions o;
  o.exact_weight_scales = exact;
  quantize(g, calibrate(g, batches(100, 8)), o);
  return g;
}

// The output's signal-to-noise against the float graph's over 16 test inputs, in dB.
double output_sqnr_db(const Graph &q) {
  const Graph f = model();
  double signal = 0, noise = 0;
  for (const auto &b : batches(500, 16)) {
    const Tensor want = ReferenceExecutor(f).run(b)[0], got = ReferenceExecutor(q).run(b)[0];
    for (int64_t i = 0; i < want.size(); ++i) {
      signal += want.as_double(i) * want.as_double(i);
      noise += (got.as_double(i) - want.as_double(i)) * (got.as_double(i) - want.as_double(i));
    }
  }
  return 10 * std::log10(signal / noise);
}

// The largest |level| of each output channel of every int8 weight the integer layers read
// (ConvInteger's [O, ...], MatMulInteger's [K, M]).
std::vector<int> channel_max_levels(const Graph &g) {
  std::vector<int> out;
  for (const Node *n : g.nodes()) {
    if (n->op != OpKind::kConvInteger && n->op != OpKind::kMatMulInteger) continue;
    const Tensor &w = *n->inputs[1]->constant;
    const bool conv = n->op == OpKind::kConvInteger;
    const int64_t O = conv ? w.dim(0) : w.dim(1), inner = w.size() / O;
    for (int64_t o = 0; o < O; ++o) {
      int m = 0;
      for (int64_t i = 0; i < inner; ++i)
        m = std::max(m, std::abs(int(w.data<int8_t>()[conv ? o * inner + i : i * O + o])));
      out.push_back(m);
    }
  }
  return out;
}

TEST(ExactWeightScales, EveryChannelFillsItsGrid) {
  const std::vector<int> exact = channel_max_levels(quantized(true));
  const std::vector<int> pow2 = channel_max_levels(quantized(false));
  ASSERT_EQ(exact.size(), 42u);
  ASSERT_EQ(pow2.size(), exact.size());
  int coarse = 0;
  for (size_t o = 0; o < exact.size(); ++o) {
    EXPECT_EQ(exact[o], 127) << "channel " << o;
    coarse += pow2[o] < 100;
  }
  // With power-of-two scales a channel whose largest magnitude lies low in its octave uses
  // only part of the levels: 1.05..1.4 times a power of two reaches 66..89.
  EXPECT_GE(coarse, 10);
}

TEST(ExactWeightScales, RequantizationsMultiplyAndKeepUnsignedLevels) {
  const Graph exact = quantized(true), pow2 = quantized(false);
  int requants = 0;
  for (const Node *n : exact.nodes()) {
    if (n->op != OpKind::kRequantize) continue;
    ++requants;
    EXPECT_EQ(n->attrs.get_ints("multipliers").size(), n->name == "fc.requant" ? 10u : 16u)
        << n->name;
    EXPECT_GT(n->attrs.get_int("pre_clip", 0), 0) << n->name;
    // relu1's levels are unsigned: the zero point is added after the multiply.
    EXPECT_EQ(n->attrs.get_int("zero_point", 0), n->name == "conv1.requant" ? -128 : 0) << n->name;
  }
  EXPECT_EQ(requants, 3);
  for (const Node *n : pow2.nodes())
    if (n->op == OpKind::kRequantize) EXPECT_FALSE(n->attrs.has("multipliers")) << n->name;
}

// The real weights the integer graph computes with, level times scale, against conv1's float
// ones: the scale of channel o is its requantization's ratio (multiplier / 2^(post shift +
// shift), or 2^-shift) times 2^(fx - fy), fx and fy the input's and output's fraction bits.
double conv1_weight_sqnr_db(bool exact) {
  const Graph q = quantized(exact);
  const Tensor want = conv1_weights();
  for (const Node *n : q.nodes()) {
    if (n->op != OpKind::kConvInteger || n->outputs[0]->name != "conv1.acc") continue;
    const Node *add = q.consumers(n->outputs[0]).at(0);
    const Node *r = q.consumers(add->outputs[0]).at(0);
    EXPECT_EQ(r->op, OpKind::kRequantize);
    const int fx = *n->inputs[0]->frac_bits, fy = *r->outputs[0]->frac_bits;
    std::vector<int64_t> shifts = r->attrs.get_ints("shifts");
    const std::vector<int64_t> mult = r->attrs.get_ints("multipliers");
    const int64_t post = r->attrs.get_int("post_shift", 0);
    const Tensor &w = *n->inputs[1]->constant;
    const int64_t O = w.dim(0), inner = w.size() / O;
    double signal = 0, noise = 0;
    for (int64_t o = 0; o < O; ++o) {
      const int64_t s = shifts.size() == 1 ? shifts[0] : shifts[o];
      const double scale = (mult.empty() ? 1.0 : double(mult[o])) *
                           std::ldexp(1.0, int(fx - fy - s - (mult.empty() ? 0 : post)));
      for (int64_t i = 0; i < inner; ++i) {
        const double real = w.data<int8_t>()[o * inner + i] * scale,
                     v = want.data<float>()[o * inner + i];
        signal += v * v;
        noise += (real - v) * (real - v);
      }
    }
    return 10 * std::log10(signal / noise);
  }
  ADD_FAILURE() << "no conv1.acc";
  return 0;
}

// Channel maxima spread over their octaves: about 20 log10(1.5) dB finer on average.
TEST(ExactWeightScales, WeightsCloserToFloat) {
  const double exact = conv1_weight_sqnr_db(true), pow2 = conv1_weight_sqnr_db(false);
  EXPECT_GT(exact, pow2 + 2.0) << "exact " << exact << " dB, power of two " << pow2 << " dB";
  EXPECT_GT(exact, 40.0);
}

// Through three layers the activations' own rounding dominates; the int8 graph still follows
// the float one.
TEST(ExactWeightScales, NetworkFollowsFloat) {
  const double exact = output_sqnr_db(quantized(true)), pow2 = output_sqnr_db(quantized(false));
  EXPECT_GT(exact, 25.0) << "power of two: " << pow2 << " dB";
}

}  // namespace
