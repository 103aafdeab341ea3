// Bias correction (graph/passes/correct_bias.h) against means computed here in plain loops:
// after the pass, every corrected layer's channel means on the calibration data, measured on
// the int8 graph before the requantization's rounding, equal the float model's to within half
// an accumulator step; before it, they did not.
#include "vacc/graph/passes/correct_bias.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph_builder.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"

using namespace vacc::graph;
using vacc::graph::test::add_op;
using vacc::graph::test::random_floats;

namespace {

// conv1 relu, conv2 relu, flatten, dense; inputs with a positive mean, so that rounding the
// weights shifts the outputs' means.
Graph model() {
  Graph g;
  g.name = "bias";
  Value *x = g.add_value("x", DType::kFloat32, {1, 3, 6, 6});
  g.add_input(x);
  Attributes pads;
  pads.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Value *c1 = add_op(g, OpKind::kConv, "conv1",
                     {x, g.add_constant("w1", random_floats({8, 3, 3, 3}, 1, 0.5f)),
                      g.add_constant("b1", random_floats({8}, 2, 0.1f))},
                     pads);
  Value *r1 = add_op(g, OpKind::kRelu, "relu1", {c1});
  Value *c2 = add_op(g, OpKind::kConv, "conv2",
                     {r1, g.add_constant("w2", random_floats({8, 8, 3, 3}, 3, 0.2f)),
                      g.add_constant("b2", random_floats({8}, 4, 0.1f))},
                     pads);
  Value *r2 = add_op(g, OpKind::kRelu, "relu2", {c2});
  Value *flat = add_op(g, OpKind::kFlatten, "flat", {r2});
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  g.add_output(add_op(g, OpKind::kGemm, "fc",
                      {flat, g.add_constant("wf", random_floats({10, 288}, 5, 0.05f)),
                       g.add_constant("bf", random_floats({10}, 6, 0.1f))},
                      gemm));
  return g;
}

std::vector<std::vector<Tensor>> batches() {
  std::vector<std::vector<Tensor>> out;
  for (int i = 0; i < 4; ++i) out.push_back({random_floats({1, 3, 6, 6}, 100 + i, 1.0f, 0.5f)});
  return out;
}

// Per channel (dimension 1) means over the batches of value `name` of `g`, each element
// mapped by f.
std::vector<double> channel_means(const Graph &g, const std::string &name,
                                  const std::function<double(const Tensor &, int64_t)> &f) {
  std::vector<double> sum;
  int64_t count = 0;
  for (const auto &b : batches()) {
    ReferenceExecutor(g).run(b, [&](const Value &v, const Tensor &t) {
      if (v.name != name) return;
      const int64_t c = t.dim(1), inner = t.size() / (t.dim(0) * c);
      sum.resize(c, 0.0);
      for (int64_t i = 0; i < t.size(); ++i) sum[(i / inner) % c] += f(t, i);
      count += t.size() / c;
    });
  }
  for (double &s : sum) s /= count;
  return sum;
}

struct Layer {
  std::string add;               // the int32 Add of its bias (acc + bias')
  std::vector<int> exponent;     // s + f_y per channel: acc step 2^-exponent
  std::vector<double> rounding;  // 2^(s-1) per channel
};

Layer layer_of(const Int8Forms &forms, const std::string &name) {
  const Value *y8 = forms.at(name);
  const Node *r = y8->producer;
  EXPECT_EQ(r->op, OpKind::kRequantize) << name;
  Layer l;
  l.add = r->inputs[0]->name;
  std::vector<int64_t> shifts = r->attrs.get_ints("shifts");
  const int64_t c = r->inputs[0]->producer->inputs[1]->constant->size();
  if (shifts.size() == 1) shifts.assign(c, shifts[0]);
  for (int64_t s : shifts) {
    l.exponent.push_back(int(s) + *y8->frac_bits);
    l.rounding.push_back(s > 0 ? std::ldexp(1.0, int(s) - 1) : 0.0);
  }
  return l;
}

// The largest gap, in accumulator steps, between the float channel means of `float_name` and
// the int8 layer's (acc + bias' - rounding) * 2^-exponent.
double worst_gap(const Graph &fg, const Graph &qg, const Int8Forms &forms,
                 const std::string &float_name, const std::string &output) {
  const Layer l = layer_of(forms, output);
  const std::vector<double> want =
      channel_means(fg, float_name, [](const Tensor &t, int64_t i) { return t.data<float>()[i]; });
  const std::vector<double> got = channel_means(
      qg, l.add, [](const Tensor &t, int64_t i) { return double(t.data<int32_t>()[i]); });
  double worst = 0;
  for (size_t c = 0; c < want.size(); ++c)
    worst =
        std::max(worst, std::abs(std::ldexp(want[c], l.exponent[c]) - (got[c] - l.rounding[c])));
  return worst;
}

TEST(CorrectBias, ChannelMeansMatchTheFloatModel) {
  Graph fg = model(), qg = model();
  QuantizeOptions per_tensor;  // coarse weights: larger shifts of the means to correct
  per_tensor.per_channel_weights = false;
  Calibration calib = calibrate(qg, batches());
  ChannelMeans means;
  for (const auto &[v, m] : calib.channel_mean) means[v->name] = m;
  // The calibration's channel means are the float model's, as computed here.
  const std::vector<double> c1 =
      channel_means(fg, "conv1", [](const Tensor &t, int64_t i) { return t.data<float>()[i]; });
  ASSERT_EQ(means.at("conv1").size(), c1.size());
  for (size_t c = 0; c < c1.size(); ++c) EXPECT_NEAR(means.at("conv1")[c], c1[c], 1e-9);

  Int8Forms forms;
  quantize(qg, calib, per_tensor, &forms);
  // The int8 form of conv1 and conv2 is stored after their Relu (the relu's scale); fc's
  // output is its own.
  const std::vector<std::pair<std::string, std::string>> layers = {
      {"conv1", "conv1"}, {"conv2", "conv2"}, {"fc", "fc"}};
  double before = 0;
  for (const auto &[f, q] : layers) before = std::max(before, worst_gap(fg, qg, forms, f, q));
  EXPECT_GT(before, 0.5) << "nothing for bias correction to correct";
  const size_t nodes = qg.num_nodes();
  EXPECT_EQ(correct_bias(qg, forms, means, batches()), 3);
  EXPECT_EQ(qg.num_nodes(), nodes);
  for (const auto &[f, q] : layers) EXPECT_LE(worst_gap(fg, qg, forms, f, q), 0.5 + 1e-6) << f;
}

TEST(CorrectBias, NothingToCorrectWithoutFloatMeans) {
  Graph qg = model();
  Int8Forms forms;
  quantize(qg, calibrate(qg, batches()), {}, &forms);
  EXPECT_EQ(correct_bias(qg, forms, {}, batches()), 0);
}

}  // namespace
