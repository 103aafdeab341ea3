// The quantization report (graph/quant_report.h) against figures recomputed here from the
// float and int8 graphs' own step outputs: the SQNR with int8 inputs from both graphs run
// side by side, the SQNR with float inputs from the int8 graph run with one input replaced by
// the float value quantized (plain loops), ranges, clipping and weight ranges from the tensors.
#include "vacc/graph/quant_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "graph_builder.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

using namespace vacc::graph;
using vacc::graph::test::add_op;
using vacc::graph::test::random_floats;

namespace {

Value *conv(Graph &g, const std::string &name, Value *in, Tensor w, Tensor b) {
  Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return add_op(
      g, OpKind::kConv, name,
      {in, g.add_constant(name + ".w", std::move(w)), g.add_constant(name + ".b", std::move(b))},
      a);
}

// Where the outlier sits in conv2's weights: output channel 0, input channel 7, tap (0, 0).
constexpr int64_t kOutlier = 7 * 9;

// conv1 relu, conv2 relu, residual add, relu, flatten, dense. With `outlier`, one weight of
// conv2 is 100 times the others, on an input channel that conv1's bias keeps at zero after
// the Relu: conv2's output is the same, but at one scale per weight tensor the other weights
// lose most of their precision.
Graph model(bool outlier) {
  Graph g;
  g.name = "report";
  Value *x = g.add_value("x", DType::kFloat32, {1, 3, 6, 6});
  g.add_input(x);
  Tensor b1 = random_floats({8}, 2, 0.1f);
  if (outlier) b1.data<float>()[7] = -100.0f;
  Value *c1 = conv(g, "conv1", x, random_floats({8, 3, 3, 3}, 1, 0.5f), std::move(b1));
  Value *r1 = add_op(g, OpKind::kRelu, "relu1", {c1});
  Tensor w2 = random_floats({8, 8, 3, 3}, 3, 0.2f);
  if (outlier) w2.data<float>()[kOutlier] = 20.0f;
  Value *c2 = conv(g, "conv2", r1, std::move(w2), random_floats({8}, 4, 0.1f));
  Value *r2 = add_op(g, OpKind::kRelu, "relu2", {c2});
  Value *sum = add_op(g, OpKind::kAdd, "add", {r1, r2});
  Value *r3 = add_op(g, OpKind::kRelu, "relu3", {sum});
  Value *flat = add_op(g, OpKind::kFlatten, "flat", {r3});
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  Value *y = add_op(g, OpKind::kGemm, "fc",
                    {flat, g.add_constant("fc.w", random_floats({10, 288}, 5, 0.05f)),
                     g.add_constant("fc.b", random_floats({10}, 6, 0.1f))},
                    gemm);
  g.add_output(y);
  return g;
}

std::vector<std::vector<Tensor>> inputs(int n, uint32_t seed) {
  std::vector<std::vector<Tensor>> out;
  for (int i = 0; i < n; ++i) out.push_back({random_floats({1, 3, 6, 6}, seed + i)});
  return out;
}

struct Quantized {
  Graph fg, qg;
  Int8Forms forms;
};

Quantized quantized_model(bool outlier, const QuantizeOptions &options = {}) {
  Quantized m{model(outlier), model(outlier), {}};
  quantize(m.qg, calibrate(m.qg, inputs(3, 100)), options, &m.forms);
  return m;
}

// Every value each graph computes on `x`, by value.
std::unordered_map<const Value *, Tensor> run_all(const Graph &g, const std::vector<Tensor> &x) {
  std::unordered_map<const Value *, Tensor> out;
  ReferenceExecutor(g).run(x, [&](const Value &v, const Tensor &t) { out.emplace(&v, t); });
  return out;
}

const Value *float_value(const Graph &g, const std::string &name) {
  for (const Node *n : g.nodes())
    if (n->outputs[0]->name == name) return n->outputs[0];
  for (const Value *v : g.inputs())
    if (v->name == name) return v;
  return nullptr;
}

struct Energy {
  double signal = 0, noise = 0;
  double db() const { return 10 * std::log10(signal / noise); }
  void add(const Tensor &f, const Tensor &q, int frac_bits) {
    for (int64_t i = 0; i < f.size(); ++i) {
      const double a = f.data<float>()[i], b = q.data<int8_t>()[i] * std::pow(2.0, -frac_bits);
      signal += a * a;
      noise += (a - b) * (a - b);
    }
  }
};

const LayerQuantStats &layer(const QuantReport &r, const std::string &name) {
  for (const LayerQuantStats &l : r.layers)
    if (l.name == name) return l;
  ADD_FAILURE() << "no layer " << name;
  return r.layers.at(0);
}

TEST(QuantReport, LayersAreTheStoredInt8Values) {
  Quantized m = quantized_model(false);
  const QuantReport r = quant_report(m.fg, m.qg, m.forms, inputs(2, 7));
  std::vector<std::string> got;
  for (const LayerQuantStats &l : r.layers) got.push_back(l.name + ":" + l.ops + ":" + l.value);
  // Each convolution with its Relu is one layer (the int8 value stored after the Relu); the
  // residual add's Relu and the Flatten after it belong to the add.
  EXPECT_EQ(got,
            (std::vector<std::string>{"x:input:x", "conv1:Conv+Relu:relu1", "conv2:Conv+Relu:relu2",
                                      "add:Add+Relu+Flatten:flat", "fc:Gemm:fc"}));
  EXPECT_EQ(r.inputs, 2);
}

TEST(QuantReport, SqnrWithInt8InputsIsTheTwoGraphsSideBySide) {
  Quantized m = quantized_model(false);
  const std::vector<std::vector<Tensor>> xs = inputs(3, 7);
  const QuantReport r = quant_report(m.fg, m.qg, m.forms, xs);
  for (const LayerQuantStats &l : r.layers) {
    const Value *fv = float_value(m.fg, l.value);
    const Value *qv = m.forms.at(l.value);
    ASSERT_TRUE(fv && qv) << l.value;
    Energy e;
    float lo = INFINITY, hi = -INFINITY;
    int64_t clipped = 0, n = 0;
    for (const auto &x : xs) {
      auto f = run_all(m.fg, x), q = run_all(m.qg, x);
      e.add(f.at(fv), q.at(qv), *qv->frac_bits);
      for (int64_t i = 0; i < f.at(fv).size(); ++i) {
        const double v = f.at(fv).data<float>()[i], step = std::pow(2.0, -*qv->frac_bits);
        lo = std::min<float>(lo, v);
        hi = std::max<float>(hi, v);
        clipped += v > 127.5 * step || v < -128.5 * step;
        ++n;
      }
    }
    EXPECT_NEAR(l.sqnr_chained, e.db(), 1e-9) << l.name;
    EXPECT_EQ(l.min, lo) << l.name;
    EXPECT_EQ(l.max, hi) << l.name;
    EXPECT_EQ(l.elements, n) << l.name;
    EXPECT_DOUBLE_EQ(l.clipped, double(clipped) / n) << l.name;
    EXPECT_EQ(l.frac_bits, *qv->frac_bits);
    EXPECT_GT(l.sqnr_chained, 10.0) << l.name;  // int8 tracks float
  }
  // The first layers read the graph input quantized, as the int8 graph does: with float
  // inputs and with int8 inputs is the same.
  EXPECT_DOUBLE_EQ(layer(r, "x").sqnr_local, layer(r, "x").sqnr_chained);
  EXPECT_DOUBLE_EQ(layer(r, "conv1").sqnr_local, layer(r, "conv1").sqnr_chained);
}

// conv2 with float inputs: the int8 graph run with its relu1 replaced by the float model's
// relu1 quantized at relu1's int8 scale (round half to even, saturate), here in plain loops.
TEST(QuantReport, SqnrWithFloatInputsFeedsTheFloatValueQuantized) {
  Quantized m = quantized_model(false);
  const std::vector<std::vector<Tensor>> xs = inputs(3, 7);
  const QuantReport r = quant_report(m.fg, m.qg, m.forms, xs);
  const Value *relu1_q = m.forms.at("relu1");
  const Value *relu2_q = m.forms.at("relu2");
  const int f1 = *relu1_q->frac_bits;
  Energy e;
  for (const auto &x : xs) {
    auto f = run_all(m.fg, x);
    Tensor fed(DType::kInt8, relu1_q->shape);
    const Tensor &relu1 = f.at(float_value(m.fg, "relu1"));
    for (int64_t i = 0; i < relu1.size(); ++i)
      fed.data<int8_t>()[i] = static_cast<int8_t>(
          std::clamp(std::nearbyint(relu1.data<float>()[i] * std::pow(2.0, f1)), -128.0, 127.0));
    Tensor got;
    ReferenceExecutor(m.qg, [&](size_t, const Node &n, const std::vector<const Tensor *> &in) {
      std::vector<const Tensor *> args = in;
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (n.inputs[k] == relu1_q) args[k] = &fed;
      return execute_node(n, args);
    }).run(x, [&](const Value &v, const Tensor &t) {
      if (&v == relu2_q) got = t;
    });
    e.add(f.at(float_value(m.fg, "relu2")), got, *relu2_q->frac_bits);
  }
  EXPECT_NEAR(layer(r, "conv2").sqnr_local, e.db(), 1e-9);
  EXPECT_NE(layer(r, "conv2").sqnr_local, layer(r, "conv2").sqnr_chained);
}

TEST(QuantReport, RanksTheLayerThatLosesMostFirst) {
  QuantizeOptions per_tensor;
  per_tensor.per_channel_weights = false;
  Quantized m = quantized_model(/*outlier=*/true, per_tensor);
  const QuantReport r = quant_report(m.fg, m.qg, m.forms, inputs(2, 7));
  ASSERT_EQ(r.ranking.size(), r.layers.size());
  EXPECT_EQ(r.layers[r.ranking[0]].name, "conv2");
  for (size_t k = 1; k < r.ranking.size(); ++k)
    EXPECT_LE(r.layers[r.ranking[k - 1]].sqnr_local, r.layers[r.ranking[k]].sqnr_local);
  // Without the outlier conv2 is not the worst by far.
  Quantized clean = quantized_model(false, per_tensor);
  const QuantReport rc = quant_report(clean.fg, clean.qg, clean.forms, inputs(2, 7));
  EXPECT_GT(layer(rc, "conv2").sqnr_local, layer(r, "conv2").sqnr_local + 10);
}

TEST(QuantReport, WeightRangesPerChannel) {
  Quantized m = quantized_model(true);
  const QuantReport r = quant_report(m.fg, m.qg, m.forms, inputs(1, 7));
  const Tensor w = random_floats({8, 8, 3, 3}, 3, 0.2f);
  std::vector<float> maxes(8, 0.0f);
  for (int64_t i = 0; i < w.size(); ++i)
    maxes[i / 72] = std::max(maxes[i / 72], std::abs(i == kOutlier ? 20.0f : w.data<float>()[i]));
  const auto &wr = layer(r, "conv2").weights;
  ASSERT_TRUE(wr.has_value());
  EXPECT_EQ(wr->channels, 8);
  EXPECT_EQ(wr->max, 20.0f);
  EXPECT_EQ(wr->min, *std::min_element(maxes.begin(), maxes.end()));
  EXPECT_EQ(wr->frac_bits_min, 2);  // 20 * 2^2 = 80 <= 127 < 160
  const auto &fc = layer(r, "fc").weights;
  ASSERT_TRUE(fc.has_value());
  EXPECT_EQ(fc->channels, 10);  // Gemm transB: [10, 288]
  EXPECT_FALSE(layer(r, "add").weights.has_value());
}

TEST(QuantReport, OutputSqnrAndCosine) {
  Quantized m = quantized_model(false);
  const std::vector<std::vector<Tensor>> xs = inputs(2, 7);
  const QuantReport r = quant_report(m.fg, m.qg, m.forms, xs);
  double ff = 0, qq = 0, fq = 0, dd = 0;
  for (const auto &x : xs) {
    const Tensor f = ReferenceExecutor(m.fg).run(x)[0], q = ReferenceExecutor(m.qg).run(x)[0];
    for (int64_t i = 0; i < f.size(); ++i) {
      const double a = f.data<float>()[i], b = q.data<float>()[i];
      ff += a * a, qq += b * b, fq += a * b, dd += (a - b) * (a - b);
    }
  }
  ASSERT_EQ(r.output_sqnr.size(), 1u);
  EXPECT_NEAR(r.output_sqnr[0], 10 * std::log10(ff / dd), 1e-9);
  EXPECT_NEAR(r.output_cosine[0], fq / std::sqrt(ff * qq), 1e-12);
}

// --keep-float: the layer stays a float Conv (behind a dequantize), the report states it, and
// the next layer reads its output quantized.
TEST(QuantReport, KeptFloatLayersAreStated) {
  QuantizeOptions keep;
  keep.keep_float = {"conv2"};
  Quantized m = quantized_model(false, keep);
  int convs = 0, int_convs = 0;
  for (const Node *n : m.qg.nodes()) {
    convs += n->op == OpKind::kConv;
    int_convs += n->op == OpKind::kConvInteger;
  }
  EXPECT_EQ(convs, 1);
  EXPECT_EQ(int_convs, 1);
  const QuantReport r = quant_report(m.fg, m.qg, m.forms, inputs(2, 7), keep.keep_float);
  const LayerQuantStats &c2 = layer(r, "conv2");
  EXPECT_TRUE(c2.kept_float);
  EXPECT_TRUE(std::isinf(c2.sqnr_local) && c2.sqnr_local > 0);
  EXPECT_EQ(r.layers[r.ranking.back()].name, "conv2");
  // The add of a float input stays float too; the dense layer reads its output quantized.
  EXPECT_FALSE(layer(r, "fc").kept_float);
  EXPECT_FALSE(m.forms.count("conv2"));
  // The float conv2 (and its float Relu) no longer add their noise: the add's input from it
  // is exact until the add quantizes it.
  Quantized plain = quantized_model(false);
  const QuantReport all = quant_report(plain.fg, plain.qg, plain.forms, inputs(2, 7));
  EXPECT_GE(r.output_sqnr[0], all.output_sqnr[0] - 1.0);
}

TEST(QuantReport, KeepFloatNamesAnUnknownLayer) {
  QuantizeOptions keep;
  keep.keep_float = {"conv9"};
  Graph g = model(false);
  try {
    quantize(g, calibrate(g, inputs(1, 100)), keep);
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_STREQ(e.what(),
                 "--keep-float 'conv9': model 'report' has no layer of that name (`vacc "
                 "quant-report` lists them)");
  }
}

TEST(QuantReport, NeedsAnInput) {
  Quantized m = quantized_model(false);
  EXPECT_THROW(quant_report(m.fg, m.qg, m.forms, {}), vacc::Error);
}

}  // namespace
