// Unsigned activation levels (QuantizeOptions::unsigned_activations, docs/quantization.md): a
// Relu's or ReLU6's output that only unpadded convolutions and dense layers read is stored
// with zero point -128 and one fraction bit more; the int8 graph stays the float graph's
// function (checked against the float graph on the reference executor), the first layer's
// stored output gains about the one bit (6 dB) against float, and a value any other node
// reads (a padded convolution, a pool, an Add, an output) stays symmetric.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <unordered_map>

#include "graph_builder.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/correct_bias.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/quant_report.h"
#include "vacc/graph/reference_executor.h"

using namespace vacc::graph;
using vacc::graph::test::add_op;
using vacc::graph::test::random_floats;

namespace {

Value *conv(Graph &g, const std::string &name, Value *x, int64_t out, int64_t k, bool pad,
            uint32_t seed, int64_t groups = 1) {
  const int64_t in = x->shape[1] / groups;
  Attributes a;
  a.set("pads", std::vector<int64_t>(4, pad ? k / 2 : 0));
  if (groups > 1) a.set("group", groups);
  return add_op(g, OpKind::kConv, name,
                {x, g.add_constant(name + ".w", random_floats({out, in, k, k}, seed, 0.4f)),
                 g.add_constant(name + ".b", random_floats({out}, seed + 1, 0.3f, 0.1f))},
                a);
}

Value *clip6(Graph &g, Value *x, const std::string &name) {
  return add_op(g, OpKind::kClip, name,
                {x, g.add_constant(name + ".lo", Tensor::scalar<float>(0)),
                 g.add_constant(name + ".hi", Tensor::scalar<float>(6))});
}

// conv1 (3x3, padded) relu1 -> conv2 (1x1) clip2 -> conv3 (1x1 depthwise) relu3 -> conv4
// (3x3, padded) relu4 -> maxpool -> flatten -> fc0 relu5 -> fc. relu1, clip2 and relu5 reach
// only unpadded convolutions and dense layers; relu3 a padded convolution; relu4 a pool. With
// `trans_a`, fc is a Gemm with transA (a dense layer quantize declines: it stays float).
Graph model(bool trans_a = false) {
  Graph g;
  g.name = "unsigned";
  Value *x = g.add_value("x", DType::kFloat32, {1, 4, 8, 8});
  g.add_input(x);
  Value *r1 = add_op(g, OpKind::kRelu, "relu1", {conv(g, "conv1", x, 16, 3, true, 1)});
  Value *k2 = clip6(g, conv(g, "conv2", r1, 16, 1, false, 3), "clip2");
  Value *r3 = add_op(g, OpKind::kRelu, "relu3", {conv(g, "conv3", k2, 16, 1, false, 5, 16)});
  Value *r4 = add_op(g, OpKind::kRelu, "relu4", {conv(g, "conv4", r3, 8, 3, true, 7)});
  Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.set("strides", std::vector<int64_t>{2, 2});
  Value *p = add_op(g, OpKind::kMaxPool, "pool", {r4}, pool);
  Value *flat = add_op(g, OpKind::kFlatten, "flat", {p});
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  Value *r5 = add_op(g, OpKind::kRelu, "relu5",
                     {add_op(g, OpKind::kGemm, "fc0",
                             {flat, g.add_constant("fc0.w", random_floats({32, 128}, 9, 0.1f)),
                              g.add_constant("fc0.b", random_floats({32}, 10, 0.1f, 0.05f))},
                             gemm)});
  if (trans_a) gemm.set("transA", int64_t{1});  // [1, 32] read as [32, 1]
  g.add_output(add_op(g, OpKind::kGemm, "fc",
                      {r5, g.add_constant("fc.w", random_floats({10, trans_a ? 1 : 32}, 11, 0.2f)),
                       g.add_constant("fc.b", random_floats({10}, 12, 0.1f))},
                      gemm));
  return g;
}

std::vector<std::vector<Tensor>> batches(uint32_t seed, int n = 4) {
  std::vector<std::vector<Tensor>> out;
  for (int i = 0; i < n; ++i) out.push_back({random_floats({1, 4, 8, 8}, seed + i, 1.0f)});
  return out;
}

struct Quantized {
  Graph g;
  Int8Forms forms;
};

Quantized quantized(bool on, bool trans_a = false, bool bias_correction = false) {
  Quantized q{model(trans_a), {}};
  const auto calib = batches(100);
  Calibration c = calibrate(q.g, calib);
  ChannelMeans means;
  for (const auto &[v, m] : c.channel_mean) means[v->name] = m;
  QuantizeOptions o;
  o.unsigned_activations = on;
  quantize(q.g, c, o, &q.forms);
  if (bias_correction) correct_bias(q.g, q.forms, means, calib);
  return q;
}

// Signal-to-noise of the dequantized int8 form of float value `name` ((q - zp) * 2^-f)
// against the float graph's value, over the test inputs, in dB; the output's too ("").
double sqnr_db(const Quantized &q, const std::string &name, bool trans_a = false) {
  const Graph f = model(trans_a);
  const Value *form = name.empty() ? nullptr : q.forms.at(name);
  double signal = 0, noise = 0;
  for (const auto &b : batches(500, 8)) {
    std::unordered_map<std::string, Tensor> fv;
    std::vector<Tensor> fout = ReferenceExecutor(f).run(b, [&](const Value &v, const Tensor &t) {
      if (v.name == name) fv.emplace(name, t);
    });
    Tensor got;
    std::vector<Tensor> qout = ReferenceExecutor(q.g).run(b, [&](const Value &v, const Tensor &t) {
      if (&v == form) got = t;
    });
    const Tensor &want = name.empty() ? fout[0] : fv.at(name);
    if (name.empty()) got = qout[0];
    EXPECT_EQ(got.size(), want.size()) << name;
    for (int64_t i = 0; i < want.size(); ++i) {
      const double real = name.empty()
                              ? got.as_double(i)
                              : std::ldexp(got.as_double(i) - form->zero_point, -*form->frac_bits);
      signal += want.as_double(i) * want.as_double(i);
      noise += (real - want.as_double(i)) * (real - want.as_double(i));
    }
  }
  return 10 * std::log10(signal / noise);
}

int count(const Graph &g, OpKind op) {
  int n = 0;
  for (const Node *node : g.nodes()) n += node->op == op;
  return n;
}

TEST(UnsignedActivations, OnlyValuesReadUnpaddedTakeAZeroPoint) {
  const Quantized on = quantized(true), off = quantized(false);
  for (const char *name : {"relu1", "clip2", "relu5"}) {
    const Value *u = on.forms.at(name), *s = off.forms.at(name);
    EXPECT_EQ(u->zero_point, -128) << name;
    EXPECT_EQ(*u->frac_bits, *s->frac_bits + 1) << name << ": 255 levels over the same range";
    EXPECT_EQ(s->zero_point, 0) << name;
  }
  // relu3 reaches a padded convolution, relu4 a pool: both stay symmetric.
  EXPECT_EQ(on.forms.at("relu3")->zero_point, 0);
  EXPECT_EQ(on.forms.at("relu4")->zero_point, 0);
  // The applied Relus and Clip are gone; relu3 and relu4 run on int8 as before.
  EXPECT_EQ(count(on.g, OpKind::kClip), 0);
  EXPECT_EQ(count(on.g, OpKind::kRelu), 2);
  EXPECT_EQ(count(off.g, OpKind::kRelu), 4);
  on.g.verify();
}

TEST(UnsignedActivations, TheUnsignedValuesGainAndTheOutputIsCloserToFloat) {
  const Quantized on = quantized(true), off = quantized(false);
  // conv1 reads the same int8 input either way: its stored output differs only in its grid,
  // one bit finer (6 dB on the rounding alone; the input's own noise passes through both).
  EXPECT_GT(sqnr_db(on, "relu1") - sqnr_db(off, "relu1"), 2.0);
  EXPECT_GT(sqnr_db(on, "clip2") - sqnr_db(off, "clip2"), 2.0);
  EXPECT_GT(sqnr_db(on, "relu5") - sqnr_db(off, "relu5"), 1.0);
  // The output is stored signed either way (its own grid bounds it): closer, not by much.
  EXPECT_GT(sqnr_db(on, ""), sqnr_db(off, ""));
  EXPECT_GT(sqnr_db(on, ""), 30.0);
}

TEST(UnsignedActivations, ADenseLayerLeftFloatReadsTheValueDequantized) {
  // fc with transA stays float (quantize_dense declines), reading relu5's unsigned form
  // through its DequantizeLinear: the output stays the float model's within int8 noise.
  const Quantized on = quantized(true, /*trans_a=*/true), off = quantized(false, true);
  EXPECT_EQ(on.forms.at("relu5")->zero_point, -128);
  const Graph f = model(true);
  double worst = 0, scale = 0;
  for (const auto &b : batches(700)) {
    const Tensor want = ReferenceExecutor(f).run(b)[0], got = ReferenceExecutor(on.g).run(b)[0];
    for (int64_t i = 0; i < want.size(); ++i) {
      worst = std::max(worst, std::abs(got.as_double(i) - want.as_double(i)));
      scale = std::max(scale, std::abs(want.as_double(i)));
    }
  }
  EXPECT_LT(worst, 0.1 * scale);
  EXPECT_EQ(count(on.g, OpKind::kGemm), 1);
  EXPECT_GT(sqnr_db(on, "", true), sqnr_db(off, "", true));
}

TEST(UnsignedActivations, BiasCorrectionMatchesTheReluInputsMeans) {
  // correct_bias reads the unsigned layers' sums with their zero point: with it the output is
  // at least as close to float as without, and the sums' channel means match float's.
  const Quantized plain = quantized(true), corrected = quantized(true, false, true);
  EXPECT_GT(sqnr_db(corrected, ""), sqnr_db(plain, "") - 0.5);
  EXPECT_GT(sqnr_db(corrected, "relu1"), sqnr_db(plain, "relu1") - 0.5);
}

TEST(UnsignedActivations, QuantReportReadsTheZeroPoint) {
  Quantized q = quantized(true);
  const Graph f = model();
  const QuantReport r = quant_report(f, q.g, q.forms, batches(900));
  bool seen = false;
  for (const LayerQuantStats &l : r.layers) {
    if (l.name != "conv1") continue;
    seen = true;
    EXPECT_EQ(l.zero_point, -128);
    EXPECT_FLOAT_EQ(l.int8_max, std::ldexp(255.0f, -l.frac_bits));
    EXPECT_GT(l.sqnr_local, 30.0) << "the dequantized levels against float relu1";
    EXPECT_EQ(l.clipped, 0.0);
  }
  EXPECT_TRUE(seen);
}

}  // namespace

namespace {

TEST(UnsignedActivations, ADenseLayerOverASequenceKeepsItsShape) {
  // x [1, 6, 16] -> MatMul + Add (dense over the tokens) -> Relu -> MatMul: the first layer's
  // requantization stores the Relu's output unsigned, the second reads it as rows, and the
  // int8 model stays close to float.
  auto build = [] {
    Graph g;
    g.name = "sequence";
    Value *x = g.add_value("x", DType::kFloat32, {1, 6, 16});
    g.add_input(x);
    Value *h = add_op(g, OpKind::kMatMul, "mm1",
                      {x, g.add_constant("w1", random_floats({16, 32}, 21, 0.3f))});
    h = add_op(g, OpKind::kAdd, "add1",
               {h, g.add_constant("b1", random_floats({32}, 22, 0.2f, 0.1f))});
    Value *r = add_op(g, OpKind::kRelu, "relu", {h});
    g.add_output(add_op(g, OpKind::kMatMul, "mm2",
                        {r, g.add_constant("w2", random_floats({32, 8}, 23, 0.3f))}));
    return g;
  };
  Graph g = build();
  const Graph f = build();
  std::vector<std::vector<Tensor>> calib;
  for (uint32_t i = 0; i < 4; ++i) calib.push_back({random_floats({1, 6, 16}, 30 + i, 1.0f)});
  quantize(g, calibrate(g, calib));
  g.verify();
  int unsigned_requants = 0;
  for (const Node *n : g.nodes())
    unsigned_requants += n->op == OpKind::kRequantize && n->outputs[0]->zero_point == -128;
  EXPECT_EQ(unsigned_requants, 1);
  EXPECT_EQ(count(g, OpKind::kRelu), 0);
  double signal = 0, noise = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    const std::vector<Tensor> in = {random_floats({1, 6, 16}, 40 + i, 1.0f)};
    const Tensor want = ReferenceExecutor(f).run(in)[0], got = ReferenceExecutor(g).run(in)[0];
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t k = 0; k < want.size(); ++k) {
      signal += want.as_double(k) * want.as_double(k);
      noise += (got.as_double(k) - want.as_double(k)) * (got.as_double(k) - want.as_double(k));
    }
  }
  EXPECT_GT(10 * std::log10(signal / noise), 30.0);
}

}  // namespace
