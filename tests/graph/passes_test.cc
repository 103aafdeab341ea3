// Each graph pass on small graphs built in code, checked against the executor on the graph
// before the pass (the executor's float kernels are held to ONNX's own tests) or against
// plain C++ loops for the integer semantics the accelerator reproduces.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "../expect_error.h"
#include "graph_builder.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/constant_folding.h"
#include "vacc/graph/passes/fold_batch_norm.h"
#include "vacc/graph/passes/fold_windows.h"
#include "vacc/graph/passes/fuse.h"
#include "vacc/graph/passes/fuse_pools.h"
#include "vacc/graph/passes/fuse_residual_adds.h"
#include "vacc/graph/passes/pack_layout.h"
#include "vacc/graph/passes/partition.h"
#include "vacc/graph/passes/plan_memory.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/qpool.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/lower/graph_choices.h"
#include "vacc/lower/legality.h"

using namespace vacc::graph;
using vacc::graph::test::add_op;

namespace {

Tensor random_tensor(DType dtype, Shape shape, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) {
    if (dtype == DType::kFloat32) {
      t.data<float>()[i] = std::uniform_real_distribution<float>(-scale, scale)(rng);
    } else if (dtype == DType::kInt8) {
      t.data<int8_t>()[i] = static_cast<int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
    } else if (dtype == DType::kInt32) {
      t.data<int32_t>()[i] = std::uniform_int_distribution<int32_t>(-5000, 5000)(rng);
    }
  }
  return t;
}

Attributes conv_attrs(std::vector<int64_t> pads = {1, 1, 1, 1}) {
  Attributes a;
  a.set("pads", pads);
  return a;
}

// A 3x3 convolution (padding 1) with bias: weights "w<tag>" from `seed`, bias "b<tag>" from
// seed + 1.
Value *conv3x3(Graph &g, const std::string &name, Value *in, int64_t cin, int64_t cout, char tag,
               uint32_t seed, float w_scale, float b_scale) {
  return add_op(g, OpKind::kConv, name,
                {in,
                 g.add_constant(std::string{'w', tag},
                                random_tensor(DType::kFloat32, {cout, cin, 3, 3}, seed, w_scale)),
                 g.add_constant(std::string{'b', tag},
                                random_tensor(DType::kFloat32, {cout}, seed + 1, b_scale))},
                conv_attrs());
}

int count(const Graph &g, OpKind kind) {
  int n = 0;
  for (const Node *node : g.nodes()) n += node->op == kind;
  return n;
}

// conv(3->20) relu, conv(20->16) relu, add (residual of the two... shapes permitting), flatten,
// gemm
Graph small_cnn() {
  Graph g;
  g.name = "small";
  Value *x = g.add_value("x", DType::kFloat32, {2, 3, 6, 6});
  g.add_input(x);
  Value *c1 = conv3x3(g, "c1", x, 3, 16, '1', 1, 0.5f, 0.1f);
  Value *r1 = add_op(g, OpKind::kRelu, "r1", {c1});
  Value *c2 = conv3x3(g, "c2", r1, 16, 16, '2', 3, 0.2f, 0.1f);
  Value *r2 = add_op(g, OpKind::kRelu, "r2", {c2});
  Value *sum = add_op(g, OpKind::kAdd, "add", {r1, r2});
  Value *r3 = add_op(g, OpKind::kRelu, "r3", {sum});
  Value *flat = add_op(g, OpKind::kFlatten, "flat", {r3});
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  Value *y =
      add_op(g, OpKind::kGemm, "fc",
             {flat, g.add_constant("wf", random_tensor(DType::kFloat32, {20, 576}, 5, 0.05f)),
              g.add_constant("bf", random_tensor(DType::kFloat32, {20}, 6, 0.1f))},
             gemm);
  g.add_output(y);
  return g;
}

std::vector<std::vector<Tensor>> calib_inputs() {
  return {{random_tensor(DType::kFloat32, {2, 3, 6, 6}, 100)},
          {random_tensor(DType::kFloat32, {2, 3, 6, 6}, 101)}};
}

double cosine(const Tensor &a, const Tensor &b) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    ab += a.as_double(i) * b.as_double(i);
    aa += a.as_double(i) * a.as_double(i);
    bb += b.as_double(i) * b.as_double(i);
  }
  return ab / std::sqrt(aa * bb);
}

bool same_bytes(const Tensor &a, const Tensor &b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(ConstantFolding, FoldsConstantSubgraphsAndIdentities) {
  Graph g;
  g.name = "fold";
  Value *x = g.add_value("x", DType::kFloat32, {4});
  g.add_input(x);
  Value *a = g.add_constant("a", Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
  Value *b = g.add_constant("b", Tensor::from_vector<float>({4}, {2, 2, 2, 2}));
  Value *ab = add_op(g, OpKind::kMul, "ab", {a, b});
  Value *id = add_op(g, OpKind::kIdentity, "id", {x});
  Value *y = add_op(g, OpKind::kAdd, "y", {id, ab});
  g.add_output(y);
  EXPECT_EQ(fold_constants(g), 2);
  ASSERT_EQ(g.num_nodes(), 1u);
  Node *add = g.nodes()[0];
  EXPECT_EQ(add->inputs[0], x);
  ASSERT_TRUE(add->inputs[1]->is_constant());
  EXPECT_EQ(add->inputs[1]->constant->to_float_vector(), (std::vector<float>{2, 4, 6, 8}));
  Tensor out = ReferenceExecutor(g).run({Tensor::from_vector<float>({4}, {1, 1, 1, 1})})[0];
  EXPECT_EQ(out.to_float_vector(), (std::vector<float>{3, 5, 7, 9}));
}

// A Pad of zeros on every side (PyTorch writes one before DenseNet's average pools) is the
// identity: bypassed. One that pads is kept.
TEST(ConstantFolding, PadsOfNothingAreBypassed) {
  Graph g;
  g.name = "pads";
  Value *x = g.add_value("x", DType::kFloat32, {1, 2, 3, 3});
  g.add_input(x);
  Value *none = g.add_constant("none", Tensor::from_vector<int64_t>({8}, {0, 0, 0, 0, 0, 0, 0, 0}));
  Value *some = g.add_constant("some", Tensor::from_vector<int64_t>({8}, {0, 0, 1, 0, 0, 0, 0, 1}));
  Attributes constant;
  constant.set("mode", std::string("constant"));
  Value *p0 = add_op(g, OpKind::kPad, "p0", {x, none}, constant);
  Value *p1 = add_op(g, OpKind::kPad, "p1", {p0, some}, constant);
  g.add_output(add_op(g, OpKind::kRelu, "y", {p1}));
  EXPECT_EQ(fold_constants(g), 1);
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.nodes()[0]->op, OpKind::kPad);
  EXPECT_EQ(g.nodes()[0]->inputs[0], x);
  std::vector<float> in(18);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) - 9;
  const Tensor out = ReferenceExecutor(g).run({Tensor::from_vector<float>({1, 2, 3, 3}, in)})[0];
  ASSERT_EQ(out.shape(), (Shape{1, 2, 4, 4}));
  // Row 0 of each plane is the new top row (zero), column 3 the new right column.
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t w = 0; w < 4; ++w) {
        const float want = h == 0 || w == 3 ? 0.f : std::max(0.f, in[(c * 3 + h - 1) * 3 + w]);
        EXPECT_EQ(out.data<float>()[(c * 4 + h) * 4 + w], want) << c << h << w;
      }
}

TEST(FoldBatchNorm, ConvBatchNormBecomesOneConv) {
  Graph g;
  g.name = "bn";
  Value *x = g.add_value("x", DType::kFloat32, {1, 3, 5, 5});
  g.add_input(x);
  Value *c = add_op(g, OpKind::kConv, "conv",
                    {x, g.add_constant("w", random_tensor(DType::kFloat32, {8, 3, 3, 3}, 7))},
                    conv_attrs());
  Tensor var = random_tensor(DType::kFloat32, {8}, 11);
  for (int64_t i = 0; i < 8; ++i) var.data<float>()[i] = std::abs(var.data<float>()[i]) + 0.1f;
  Value *y = add_op(g, OpKind::kBatchNormalization, "bn",
                    {c, g.add_constant("gamma", random_tensor(DType::kFloat32, {8}, 8)),
                     g.add_constant("beta", random_tensor(DType::kFloat32, {8}, 9)),
                     g.add_constant("mean", random_tensor(DType::kFloat32, {8}, 10)),
                     g.add_constant("var", var)});
  g.add_output(y);
  Tensor input = random_tensor(DType::kFloat32, {1, 3, 5, 5}, 12);
  Tensor before = ReferenceExecutor(g).run({input})[0];
  EXPECT_EQ(fold_batch_norm(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.nodes()[0]->op, OpKind::kConv);
  Tensor after = ReferenceExecutor(g).run({input})[0];
  for (int64_t i = 0; i < before.size(); ++i) {
    EXPECT_NEAR(after.as_double(i), before.as_double(i),
                1e-4 * (1 + std::abs(before.as_double(i))));
  }
}

TEST(Quantize, PowerOfTwoInt8GraphTracksFloat) {
  Graph g = small_cnn();
  Tensor input = random_tensor(DType::kFloat32, {2, 3, 6, 6}, 200);
  Tensor want = ReferenceExecutor(g).run({input})[0];
  Calibration calib = calibrate(g, calib_inputs());
  EXPECT_GT(quantize(g, calib), 5);
  EXPECT_EQ(count(g, OpKind::kConvInteger), 2);
  EXPECT_EQ(count(g, OpKind::kMatMulInteger), 1);
  EXPECT_EQ(count(g, OpKind::kQAdd), 1);
  EXPECT_EQ(count(g, OpKind::kConv) + count(g, OpKind::kGemm), 0);
  for (const Node *n : g.nodes()) {
    if (n->op == OpKind::kRequantize) {
      for (int64_t s : n->attrs.get_ints("shifts")) EXPECT_GE(s, 0);
    }
  }
  EXPECT_EQ(g.outputs()[0]->dtype, DType::kFloat32);
  Tensor got = ReferenceExecutor(g).run({input})[0];
  EXPECT_GT(cosine(got, want), 0.99);
}

TEST(Quantize, FracBits) {
  EXPECT_EQ(frac_bits_for(1.0f), 6);  // 127 / 1 -> 2^6 = 64
  EXPECT_EQ(frac_bits_for(127.0f), 0);
  EXPECT_EQ(frac_bits_for(0.01f), 13);  // 0.01 * 8192 = 81.9
  EXPECT_EQ(frac_bits_for(0.0f), 0);
}

TEST(Fuse, FusedGraphIsBitExactWithUnfused) {
  Graph g = small_cnn();
  quantize(g, calibrate(g, calib_inputs()));
  fold_constants(g);
  Tensor input = random_tensor(DType::kFloat32, {2, 3, 6, 6}, 300);
  Tensor before = ReferenceExecutor(g).run({input})[0];
  EXPECT_EQ(fuse(g), 2 + 1 + 1);  // 2 QConv (with their Relus), 1 QDense, Relu into QAdd
  EXPECT_EQ(count(g, OpKind::kQConv), 2);
  EXPECT_EQ(count(g, OpKind::kQDense), 1);
  EXPECT_EQ(count(g, OpKind::kRelu), 0);
  EXPECT_EQ(count(g, OpKind::kRequantize), 0);
  for (const Node *n : g.nodes()) {
    if (n->op == OpKind::kQConv || n->op == OpKind::kQAdd) {
      EXPECT_EQ(n->attrs.get_int("clip_min"), 0);
    }
  }
  Tensor after = ReferenceExecutor(g).run({input})[0];
  EXPECT_TRUE(same_bytes(before, after));
}

// A plain loop version of vacc.QConv's semantics (docs/quantization.md).
TEST(IntegerSemantics, QConvMatchesPlainLoops) {
  Graph g;
  g.name = "qconv";
  Value *x = g.add_value("x", DType::kInt8, {1, 5, 4, 4});
  g.add_input(x);
  Tensor w = random_tensor(DType::kInt8, {3, 5, 3, 3}, 20);
  Tensor b = random_tensor(DType::kInt32, {3}, 21);
  Attributes a = conv_attrs({1, 1, 0, 1});  // top 1, left 1, bottom 0, right 1
  a.set("strides", std::vector<int64_t>{2, 1});
  a.set("shifts", std::vector<int64_t>{7, 9, 11});
  a.set("clip_min", int64_t{-100});
  a.set("clip_max", int64_t{90});
  Value *y = add_op(g, OpKind::kQConv, "q", {x, g.add_constant("w", w), g.add_constant("b", b)}, a);
  g.add_output(y);
  Tensor xin = random_tensor(DType::kInt8, {1, 5, 4, 4}, 22);
  Tensor got = ReferenceExecutor(g).run({xin})[0];
  ASSERT_EQ(got.shape(), (Shape{1, 3, 2, 4}));
  int shifts[3] = {7, 9, 11};
  for (int o = 0; o < 3; ++o)
    for (int oy = 0; oy < 2; ++oy)
      for (int ox = 0; ox < 4; ++ox) {
        int64_t acc = 0;
        for (int c = 0; c < 5; ++c)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              int iy = oy * 2 + ky - 1, ix = ox + kx - 1;
              if (iy < 0 || iy >= 4 || ix < 0 || ix >= 4) continue;
              acc += int64_t{xin.data<int8_t>()[(c * 4 + iy) * 4 + ix]} *
                     w.data<int8_t>()[((o * 5 + c) * 3 + ky) * 3 + kx];
            }
        int32_t v = static_cast<int32_t>(acc + b.data<int32_t>()[o]);
        v >>= shifts[o];
        v = std::min(std::max(v, -100), 90);
        EXPECT_EQ(got.data<int8_t>()[(o * 2 + oy) * 4 + ox], v) << o << "," << oy << "," << ox;
      }
}

TEST(IntegerSemantics, QAddMatchesPlainLoops) {
  Graph g;
  g.name = "qadd";
  Value *a = g.add_value("a", DType::kInt8, {64});
  Value *b = g.add_value("b", DType::kInt8, {64});
  g.add_input(a);
  g.add_input(b);
  Attributes attrs;
  attrs.set("lshift_a", int64_t{2});
  attrs.set("lshift_b", int64_t{0});
  attrs.set("rshift", int64_t{3});
  attrs.set("clip_min", int64_t{0});
  attrs.set("clip_max", int64_t{127});
  g.add_output(add_op(g, OpKind::kQAdd, "s", {a, b}, attrs));
  Tensor ta = random_tensor(DType::kInt8, {64}, 30), tb = random_tensor(DType::kInt8, {64}, 31);
  Tensor got = ReferenceExecutor(g).run({ta, tb})[0];
  for (int i = 0; i < 64; ++i) {
    int32_t v = ((ta.data<int8_t>()[i] * 4 + tb.data<int8_t>()[i]) + 4) >> 3;
    EXPECT_EQ(got.data<int8_t>()[i], std::min(std::max(v, 0), 127)) << i;
  }
}

// The pipeline up to the partition: calibrated on `calib`, quantized, folded, fused, and
// partitioned for `config`.
Graph partitioned(Graph g, const std::vector<std::vector<Tensor>> &calib,
                  const vacc::isa::HwConfig &config) {
  quantize(g, calibrate(g, calib));
  fold_constants(g);
  fuse(g);
  partition(g, vacc::lower::accel_legality(config));
  return g;
}

Graph compiled_small_cnn(const vacc::isa::HwConfig &config) {
  return partitioned(small_cnn(), calib_inputs(), config);
}

// conv(3->16) relu, MaxPool 3x3/2 pad 1, AveragePool 3x3/1 pad 1 (not counting the padding),
// GlobalAveragePool, flatten, gemm: ResNet's stem pool and head.
Graph pooled_cnn() {
  Graph g;
  g.name = "pooled";
  Value *x = g.add_value("x", DType::kFloat32, {1, 3, 12, 12});
  g.add_input(x);
  Value *c1 = conv3x3(g, "c1", x, 3, 16, '1', 1, 0.5f, 0.1f);
  Value *r1 = add_op(g, OpKind::kRelu, "r1", {c1});
  Attributes mp;
  mp.set("kernel_shape", std::vector<int64_t>{3, 3});
  mp.set("strides", std::vector<int64_t>{2, 2});
  mp.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Value *m = add_op(g, OpKind::kMaxPool, "mp", {r1}, mp);
  Attributes ap;
  ap.set("kernel_shape", std::vector<int64_t>{3, 3});
  ap.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Value *a = add_op(g, OpKind::kAveragePool, "ap", {m}, ap);
  Value *gap = add_op(g, OpKind::kGlobalAveragePool, "gap", {a});
  Value *flat = add_op(g, OpKind::kFlatten, "flat", {gap});
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  g.add_output(
      add_op(g, OpKind::kGemm, "fc",
             {flat, g.add_constant("wf", random_tensor(DType::kFloat32, {10, 16}, 5, 0.3f)),
              g.add_constant("bf", random_tensor(DType::kFloat32, {10}, 6, 0.1f))},
             gemm));
  return g;
}

std::vector<std::vector<Tensor>> pooled_calib() {
  return {{random_tensor(DType::kFloat32, {1, 3, 12, 12}, 110)},
          {random_tensor(DType::kFloat32, {1, 3, 12, 12}, 111)}};
}

TEST(Quantize, AveragePoolsBecomeIntegerAveragesThatTrackFloat) {
  Graph g = pooled_cnn();
  Tensor input = random_tensor(DType::kFloat32, {1, 3, 12, 12}, 210);
  Tensor want = ReferenceExecutor(g).run({input})[0];
  quantize(g, calibrate(g, pooled_calib()));
  EXPECT_EQ(count(g, OpKind::kQAveragePool), 2);
  EXPECT_EQ(count(g, OpKind::kAveragePool) + count(g, OpKind::kGlobalAveragePool), 0);
  EXPECT_EQ(count(g, OpKind::kDequantizeLinear), 1);  // the output only
  for (const Node *n : g.nodes()) {
    if (n->op != OpKind::kQAveragePool) continue;
    EXPECT_GE(n->attrs.get_int("rshift"), 1) << n->describe();
    // The smallest window: a corner of the padded 3x3 pool (4 inputs), or the global one.
    const int64_t k = n->attrs.get_ints("kernel_shape")[0];
    EXPECT_LE(qpool_multiplier(n->attrs.has("pads") ? 4 : k * k,
                               static_cast<int>(n->attrs.get_int("scale_bits"))),
              kQPoolMaxMultiplier);
  }
  EXPECT_GT(cosine(ReferenceExecutor(g).run({input})[0], want), 0.99);
}

// MobileNetV2's head: conv, ReLU6 (Clip 0..6), GlobalAveragePool, flatten, gemm. The pool of
// the clipped value is quantized at the Clip's range, which is the scale the convolution stores
// at, so fuse makes the Clip the convolution's integer clip: no float step is left between the
// first quantize and the last dequantize.
TEST(Quantize, AveragePoolAfterReLU6LeavesNoFloatStep) {
  Graph g;
  g.name = "relu6_gap";
  Value *x = g.add_value("x", DType::kFloat32, {1, 3, 8, 8});
  g.add_input(x);
  Value *c1 = conv3x3(g, "c1", x, 3, 16, '1', 11, 0.8f, 0.3f);
  Value *r6 = add_op(g, OpKind::kClip, "relu6",
                     {c1, g.add_constant("lo", Tensor::scalar<float>(0.0f)),
                      g.add_constant("hi", Tensor::scalar<float>(6.0f))});
  Value *gap = add_op(g, OpKind::kGlobalAveragePool, "gap", {r6});
  Value *flat = add_op(g, OpKind::kFlatten, "flat", {gap});
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  g.add_output(
      add_op(g, OpKind::kGemm, "fc",
             {flat, g.add_constant("wf", random_tensor(DType::kFloat32, {10, 16}, 13, 0.3f)),
              g.add_constant("bf", random_tensor(DType::kFloat32, {10}, 14, 0.1f))},
             gemm));
  Tensor input = random_tensor(DType::kFloat32, {1, 3, 8, 8}, 15, 3.0f);
  Tensor want = ReferenceExecutor(g).run({input})[0];
  std::vector<std::vector<Tensor>> calib = {
      {random_tensor(DType::kFloat32, {1, 3, 8, 8}, 16, 3.0f)},
      {random_tensor(DType::kFloat32, {1, 3, 8, 8}, 17, 3.0f)}};
  quantize(g, calibrate(g, calib));
  fold_constants(g);
  fuse(g);
  EXPECT_EQ(count(g, OpKind::kClip), 0) << print_graph(g);
  EXPECT_EQ(count(g, OpKind::kQAveragePool), 1);
  EXPECT_EQ(count(g, OpKind::kQuantizeLinear), 1);    // the input only
  EXPECT_EQ(count(g, OpKind::kDequantizeLinear), 1);  // the output only
  for (const Node *n : g.nodes()) {
    if (n->op != OpKind::kQConv) continue;
    // ReLU6 as the convolution's clip: [0, 6 at its scale].
    EXPECT_EQ(n->attrs.get_int("clip_min", -128), 0) << n->describe();
    EXPECT_LT(n->attrs.get_int("clip_max", 127), 127) << n->describe();
  }
  EXPECT_GT(cosine(ReferenceExecutor(g).run({input})[0], want), 0.99);
}

// vacc.QAveragePool (graph/qpool.h) against plain loops, and against the exact average: each
// output is the window's mean at the output's scale, rounded, to within the multiplier's error.
TEST(IntegerSemantics, QAveragePoolMatchesPlainLoops) {
  for (int include_pad : {0, 1}) {
    Graph g;
    g.name = "qpool";
    Value *x = g.add_value("x", DType::kInt8, {1, 2, 7, 6});
    g.add_input(x);
    Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{3, 3});
    a.set("strides", std::vector<int64_t>{2, 2});
    a.set("pads", std::vector<int64_t>{1, 0, 1, 1});  // top 1, left 0, bottom 1, right 1
    a.set("ceil_mode", int64_t{1});
    a.set("count_include_pad", int64_t{include_pad});
    a.set("scale_bits", int64_t{18});
    a.set("rshift", int64_t{17});  // the output holds 2x the mean
    g.add_output(add_op(g, OpKind::kQAveragePool, "p", {x}, a));
    Tensor xin = random_tensor(DType::kInt8, {1, 2, 7, 6}, 40);
    Tensor got = ReferenceExecutor(g).run({xin})[0];
    ASSERT_EQ(got.shape(), (Shape{1, 2, 4, 3}));
    for (int c = 0; c < 2; ++c)
      for (int oy = 0; oy < 4; ++oy)
        for (int ox = 0; ox < 3; ++ox) {
          int64_t sum = 0, n = 0;
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              const int iy = oy * 2 + ky - 1, ix = ox * 2 + kx;
              const bool in_pads = iy >= -1 && iy < 8 && ix < 7;  // the explicit padding
              const bool inside = iy >= 0 && iy < 7 && ix < 6;
              n += include_pad ? in_pads : inside;
              if (inside) sum += xin.data<int8_t>()[(c * 7 + iy) * 6 + ix];
            }
          const int64_t m = ((int64_t{1} << 18) + n / 2) / n;
          const int64_t v =
              std::min<int64_t>(std::max<int64_t>((sum * m + (1 << 16)) >> 17, -128), 127);
          const int8_t y = got.data<int8_t>()[(c * 4 + oy) * 3 + ox];
          EXPECT_EQ(y, v) << include_pad << ": " << c << "," << oy << "," << ox;
          const double mean2 = 2.0 * double(sum) / double(n);
          if (mean2 > -128 && mean2 < 127) {
            EXPECT_LE(std::abs(y - mean2), 0.51);
          }
        }
  }
}

// Each diagnostic of vacc.QAveragePool's shape inference names the attribute and its range.
TEST(IntegerSemantics, QAveragePoolRefusesBadAttributes) {
  auto infer = [](DType dtype, Shape shape,
                  const std::vector<std::pair<const char *, int64_t>> &kv) {
    Graph g;
    Value *x = g.add_value("x", dtype, shape);
    g.add_input(x);
    Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{2, 2});
    a.set("scale_bits", int64_t{16});
    a.set("rshift", int64_t{16});
    for (const auto &[key, v] : kv) a.set(key, v);
    add_op(g, OpKind::kQAveragePool, "p", {x}, a);
  };
  const Shape s = {1, 2, 4, 4};
  infer(DType::kInt8, s, {});  // the base case is valid
  EXPECT_ERROR(infer(DType::kFloat32, s, {}), "'x'");
  EXPECT_ERROR(infer(DType::kInt8, {1, 2, 4}, {}), "expected a 2-D pool's");
  EXPECT_ERROR(infer(DType::kInt8, s, {{"scale_bits", 24}}),
               "attribute 'scale_bits' = 24 must lie in [0, 23]");
  EXPECT_ERROR(infer(DType::kInt8, s, {{"rshift", 0}}),
               "attribute 'rshift' = 0 must lie in [1, 30]");
  EXPECT_ERROR(infer(DType::kInt8, s, {{"clip_min", 5}, {"clip_max", 4}}),
               "clip bounds [5, 4] must be an int8 range");
  Graph g;
  Value *x = g.add_value("x", DType::kInt8, s);
  g.add_input(x);
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{2, 2});
  a.set("dilations", std::vector<int64_t>{2, 2});
  a.set("scale_bits", int64_t{16});
  a.set("rshift", int64_t{16});
  EXPECT_ERROR(add_op(g, OpKind::kQAveragePool, "p", {x}, a), "a dilated window (dilations 2)");
}

// A fused pool whose window does not fit the convolution's output, and a windowed pack's
// replicate_pads of the wrong length, are refused by shape inference.
TEST(FusePools, BadFusedWindowAndReplicatePadsAreRefused) {
  vacc::isa::HwConfig config;
  Graph g = partitioned(pooled_cnn(), pooled_calib(), config);
  ASSERT_EQ(fold_windows(g, config, vacc::lower::window_folding(config)), 1);
  pack_layout(g, config);
  Node *conv = nullptr, *pack = nullptr;
  for (Node *n : g.nodes()) {
    if (n->op == OpKind::kQConv) conv = n;
    if (n->op == OpKind::kPackNCHWnc && n->attrs.has("kernel_shape")) pack = n;
  }
  ASSERT_TRUE(conv && pack);
  conv->attrs.set("pool_kernel_shape", std::vector<int64_t>{13, 13});
  EXPECT_ERROR(infer_node(*conv),
               "a fused pool's window (pool_kernel_shape, pool_strides) does not fit the output");
  pack->attrs.set("replicate_pads", std::vector<int64_t>{1, 1, 0});
  EXPECT_ERROR(infer_node(*pack), "attribute 'replicate_pads' must be 4 non-negative values");
}

TEST(Partition, PlacesIntrinsicOpsOnTheAccelerator) {
  vacc::isa::HwConfig config;
  Graph g = compiled_small_cnn(config);
  for (const Node *n : g.nodes()) {
    bool want = n->op == OpKind::kQConv || n->op == OpKind::kQDense || n->op == OpKind::kQAdd;
    EXPECT_EQ(n->target == Target::kAccel, want) << n->describe();
  }
  Node *conv = nullptr;
  for (Node *n : g.nodes()) {
    if (n->op == OpKind::kQConv) conv = n;
  }
  ASSERT_NE(conv, nullptr);
  conv->attrs.set("dilations", std::vector<int64_t>{2, 2});
  EXPECT_EQ(vacc::lower::why_not_accelerated(*conv, config), "dilated convolution");
  conv->attrs.set("dilations", std::vector<int64_t>{1, 1});
  EXPECT_EQ(vacc::lower::why_not_accelerated(*conv, config), std::nullopt);
  vacc::isa::HwConfig narrow = config;
  narrow.inp_bits = 4;
  const auto why = vacc::lower::why_not_accelerated(*conv, narrow);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("widths"), std::string::npos) << *why;
}

TEST(PackLayout, BlockedGraphIsBitExactAndTransformsSitAtBorders) {
  vacc::isa::HwConfig config;  // batch 1, blocks 16x16
  Graph plain = compiled_small_cnn(config);
  Graph packed = compiled_small_cnn(config);
  int transforms = pack_layout(packed, config);
  // Pack before conv1 (3 -> 16 padded channels) and before the dense layer, unpacks after
  // the residual add (read by the CPU Flatten) and after the dense layer.
  EXPECT_EQ(count(packed, OpKind::kPackNCHWnc), 2);
  EXPECT_EQ(count(packed, OpKind::kUnpackNCHWnc), 2);
  EXPECT_EQ(transforms, 4);
  for (const Node *n : packed.nodes()) {
    if (n->op == OpKind::kQConv && n->inputs[0]->producer &&
        n->inputs[0]->producer->op == OpKind::kPackNCHWnc) {
      EXPECT_EQ(n->inputs[1]->shape, (Shape{1, 1, 3, 3, 16, 16}));  // w1 [16,3,3,3] blocked
      EXPECT_EQ(n->inputs[0]->shape, (Shape{2, 1, 6, 6, 1, 16}));
    }
  }
  Tensor input = random_tensor(DType::kFloat32, {2, 3, 6, 6}, 400);
  EXPECT_TRUE(same_bytes(ReferenceExecutor(plain).run({input})[0],
                         ReferenceExecutor(packed).run({input})[0]));
}

// Pools on the accelerator read and write blocked tensors; the packed graph's reference
// computes the same bytes (the padded channels are pooled zeros).
TEST(PackLayout, PoolsOnTheAcceleratorAreBitExactBlocked) {
  vacc::isa::HwConfig config;
  auto compiled = [&] {
    Graph g = partitioned(pooled_cnn(), pooled_calib(), config);
    return g;
  };
  Graph plain = compiled(), packed = compiled();
  for (const Node *n : plain.nodes())
    if (n->op == OpKind::kMaxPool || n->op == OpKind::kQAveragePool) {
      EXPECT_EQ(n->target, Target::kAccel) << n->describe();
    }
  pack_layout(packed, config);
  Node *pool = nullptr;
  for (Node *n : packed.nodes())
    if (n->op == OpKind::kMaxPool) pool = n;
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->outputs[0]->shape, (Shape{1, 1, 6, 6, 1, 16}));
  Tensor input = random_tensor(DType::kFloat32, {1, 3, 12, 12}, 410);
  EXPECT_TRUE(same_bytes(ReferenceExecutor(plain).run({input})[0],
                         ReferenceExecutor(packed).run({input})[0]));
}

// The stem's pool fuses into its folded convolution: the windowed pack grows the grid by a
// copy of its first row and column, the pool's padding is gone, and the bytes are the same.
TEST(FusePools, PaddedPoolFusesIntoAFoldedConvolutionBitExactly) {
  vacc::isa::HwConfig config;
  auto compiled = [&](bool fuse_them) {
    Graph g = partitioned(pooled_cnn(), pooled_calib(), config);
    EXPECT_EQ(fold_windows(g, config, vacc::lower::window_folding(config)), 1);
    if (fuse_them) {
      EXPECT_EQ(fuse_pools(g, vacc::lower::accel_legality(config)), 1);
    }
    pack_layout(g, config);
    return g;
  };
  Graph plain = compiled(false), fused = compiled(true);
  EXPECT_EQ(count(fused, OpKind::kMaxPool), 0);
  const Node *conv = nullptr, *pack = nullptr;
  for (const Node *n : fused.nodes()) {
    if (n->op == OpKind::kQConv) conv = n;
    if (n->op == OpKind::kPackNCHWnc && n->attrs.has("kernel_shape")) pack = n;
  }
  ASSERT_TRUE(conv && pack);
  EXPECT_EQ(conv->attrs.get_ints("pool_kernel_shape"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(pack->attrs.get_ints("replicate_pads"), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(pack->outputs[0]->shape[2], 13);  // 12 rows and a copy of the first
  EXPECT_EQ(conv->outputs[0]->shape[2], 6);
  EXPECT_EQ(vacc::lower::why_not_accelerated(*conv, config), std::nullopt);
  Tensor input = random_tensor(DType::kFloat32, {1, 3, 12, 12}, 420);
  EXPECT_TRUE(same_bytes(ReferenceExecutor(plain).run({input})[0],
                         ReferenceExecutor(fused).run({input})[0]));
}

TEST(PackLayout, BlockRoundTrip) {
  Graph g;
  g.name = "pack";
  Value *x = g.add_value("x", DType::kInt8, {3, 20, 2, 2});
  g.add_input(x);
  Attributes pa;
  pa.set("block_n", int64_t{2});
  pa.set("block_c", int64_t{16});
  Value *p = add_op(g, OpKind::kPackNCHWnc, "p", {x}, pa);
  EXPECT_EQ(p->shape, (Shape{2, 2, 2, 2, 2, 16}));
  Attributes ua = pa;
  ua.set("shape", Shape{3, 20, 2, 2});
  g.add_output(add_op(g, OpKind::kUnpackNCHWnc, "u", {p}, ua));
  g.add_output(p);
  Tensor in = random_tensor(DType::kInt8, {3, 20, 2, 2}, 50);
  std::vector<Tensor> out = ReferenceExecutor(g).run({in});
  EXPECT_TRUE(same_bytes(out[0], in));
  // Element (n=2, c=17, h=1, w=0) sits at block (1, 1), position (1, 0), lane (0, 1).
  int64_t blocked_index = ((((1 * 2 + 1) * 2 + 1) * 2 + 0) * 2 + 0) * 16 + 1;
  EXPECT_EQ(out[1].data<int8_t>()[blocked_index], in.data<int8_t>()[((2 * 20 + 17) * 2 + 1) * 2]);
}

TEST(PackLayout, WindowedPackUnfoldsWindowsLikePlainLoops) {
  Graph g;
  g.name = "im2col";
  Value *x = g.add_value("x", DType::kInt8, {2, 3, 7, 9});
  g.add_input(x);
  Attributes pa;
  pa.set("block_n", int64_t{1});
  pa.set("block_c", int64_t{16});
  pa.set("kernel_shape", std::vector<int64_t>{3, 2});
  pa.set("strides", std::vector<int64_t>{2, 3});
  pa.set("pads", std::vector<int64_t>{1, 0, 1, 1});
  Value *p = add_op(g, OpKind::kPackNCHWnc, "p", {x}, pa);
  // OH = (7 + 2 - 3) / 2 + 1 = 4, OW = (9 + 1 - 2) / 3 + 1 = 3; 3*3*2 = 18 channels, 2 blocks.
  EXPECT_EQ(p->shape, (Shape{2, 2, 4, 3, 1, 16}));
  g.add_output(p);
  Tensor in = random_tensor(DType::kInt8, {2, 3, 7, 9}, 60);
  Tensor got = ReferenceExecutor(g).run({in})[0];
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t f = 0; f < 32; ++f)
      for (int64_t oy = 0; oy < 4; ++oy)
        for (int64_t ox = 0; ox < 3; ++ox) {
          const int64_t c = f / 6, y = oy * 2 + (f % 6) / 2 - 1, xx = ox * 3 + f % 2;
          const bool inside = f < 18 && y >= 0 && y < 7 && xx < 9;
          const int8_t want = inside ? in.data<int8_t>()[((n * 3 + c) * 7 + y) * 9 + xx] : 0;
          EXPECT_EQ(got.data<int8_t>()[(((n * 2 + f / 16) * 4 + oy) * 3 + ox) * 16 + f % 16], want)
              << n << " " << f << " " << oy << " " << ox;
        }
}

TEST(PackLayout, WindowedPackOfANonImageNamesItsShape) {
  Graph g;
  Value *x = g.add_value("x", DType::kInt8, {2, 3, 7});
  g.add_input(x);
  Attributes pa;
  pa.set("block_n", int64_t{1});
  pa.set("block_c", int64_t{16});
  pa.set("kernel_shape", std::vector<int64_t>{3, 3});
  Value *out = g.add_value("p", DType::kInt8, {});
  Node *node = g.add_node(OpKind::kPackNCHWnc, "p", {x}, {out}, pa);
  try {
    infer_node(*node);
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_NE(
        std::string(e.what()).find("a windowed pack takes an [N, C, H, W] input, got [2,3,7]"),
        std::string::npos)
        << e.what();
  }
}

// The folding knob's domain is wider than the heuristic's: a 3x3 convolution of 12 channels
// (more than half a block of 16, so the heuristic leaves it) folds into 7 blocks instead of 9
// taps of one block. Forced (as `vacc tune` compiles the form, and tuned cycles may choose it),
// it folds bit-exactly; 16 channels (a whole block) are outside the domain.
TEST(FoldWindows, TheKnobsWiderDomainFoldsBitExactly) {
  vacc::isa::HwConfig config;
  auto compiled = [&](int64_t channels) {
    Graph g;
    Value *x = g.add_value("x", DType::kFloat32, {1, channels, 6, 6});
    g.add_input(x);
    g.add_output(
        add_op(g, OpKind::kRelu, "r", {conv3x3(g, "c", x, channels, 16, 'c', 5, 0.3f, 0.1f)}));
    return partitioned(std::move(g),
                       {{random_tensor(DType::kFloat32, {1, channels, 6, 6}, 440)},
                        {random_tensor(DType::kFloat32, {1, channels, 6, 6}, 441)}},
                       config);
  };
  auto conv_of = [](const Graph &g) {
    for (const Node *n : g.nodes())
      if (n->op == OpKind::kQConv) return n;
    return static_cast<const Node *>(nullptr);
  };
  const auto always = vacc::lower::window_folding(config, 2, vacc::lower::GraphChoice::kAlways, {});
  Graph plain = compiled(12), folded = compiled(12);
  ASSERT_TRUE(conv_of(folded));
  EXPECT_FALSE(vacc::lower::folds_windows(*conv_of(folded), config)) << "not the heuristic's";
  EXPECT_TRUE(vacc::lower::can_fold_windows(*conv_of(folded), config, 2));
  EXPECT_EQ(fold_windows(folded, config, always), 1);
  pack_layout(plain, config);
  pack_layout(folded, config);
  EXPECT_EQ(conv_of(folded)->inputs[1]->shape, (Shape{1, 7, 1, 1, 16, 16}));  // 108 in 7 blocks
  for (uint32_t seed : {442u, 443u}) {
    const Tensor input = random_tensor(DType::kFloat32, {1, 12, 6, 6}, seed);
    EXPECT_TRUE(same_bytes(ReferenceExecutor(plain).run({input})[0],
                           ReferenceExecutor(folded).run({input})[0]));
  }
  Graph whole = compiled(16);
  EXPECT_FALSE(vacc::lower::can_fold_windows(*conv_of(whole), config, 2));
  EXPECT_EQ(fold_windows(whole, config, always), 0);
}

TEST(FoldWindows, FoldedStemIsBitExactAndAOneByOneConvolution) {
  vacc::isa::HwConfig config;  // batch 1, blocks 16x16
  Graph plain = compiled_small_cnn(config);
  Graph folded = compiled_small_cnn(config);
  EXPECT_EQ(fold_windows(folded, config, vacc::lower::window_folding(config)), 1)
      << "c1 (3 channels, 3x3) folds; c2 (16 channels) does not";
  pack_layout(folded, config);
  int windowed = 0;
  for (const Node *n : folded.nodes()) {
    if (n->op == OpKind::kPackNCHWnc && n->attrs.has("kernel_shape")) {
      ++windowed;
      EXPECT_EQ(n->outputs[0]->shape, (Shape{2, 2, 6, 6, 1, 16}));  // 27 channels in 2 blocks
    }
    if (n->op == OpKind::kQConv && n->inputs[0]->producer &&
        n->inputs[0]->producer->op == OpKind::kPackNCHWnc) {
      EXPECT_EQ(n->inputs[1]->shape, (Shape{1, 2, 1, 1, 16, 16}));  // [16, 27, 1, 1] blocked
      EXPECT_EQ(n->model_macs, int64_t{2} * 16 * 27 * 36) << "the model's MACs, not the folded";
    }
  }
  EXPECT_EQ(windowed, 1);
  for (uint32_t seed : {400u, 401u}) {
    Tensor input = random_tensor(DType::kFloat32, {2, 3, 6, 6}, seed);
    EXPECT_TRUE(same_bytes(ReferenceExecutor(plain).run({input})[0],
                           ReferenceExecutor(folded).run({input})[0]));
  }
}

TEST(FuseResidualAdds, AddBecomesTheEpilogueOfItsSoleProducer) {
  vacc::isa::HwConfig config;
  Graph plain = compiled_small_cnn(config);
  Graph fused = compiled_small_cnn(config);
  // add(r1, r2): r1 (conv1's) is read by conv2 too, so only conv2 can take the add.
  EXPECT_EQ(fuse_residual_adds(fused, vacc::lower::accel_legality(config)), 1);
  EXPECT_EQ(count(fused, OpKind::kQAdd), 0);
  const Node *conv2 = nullptr;
  for (const Node *n : fused.nodes())
    if (n->op == OpKind::kQConv && n->input(3)) conv2 = n;
  ASSERT_NE(conv2, nullptr);
  EXPECT_EQ(conv2->input(3)->producer->op, OpKind::kQConv) << "the skip is conv1's output";
  EXPECT_TRUE(conv2->attrs.has("residual_rshift"));
  pack_layout(fused, config);
  EXPECT_TRUE(conv2->input(3)->layout.blocked);
  for (uint32_t seed : {400u, 402u}) {
    Tensor input = random_tensor(DType::kFloat32, {2, 3, 6, 6}, seed);
    EXPECT_TRUE(same_bytes(ReferenceExecutor(plain).run({input})[0],
                           ReferenceExecutor(fused).run({input})[0]));
  }
  // A legality that refuses the fused convolution leaves the add alone.
  Graph kept = compiled_small_cnn(config);
  EXPECT_EQ(fuse_residual_adds(kept, AccelLegality([](const Node &n) -> std::optional<std::string> {
                                 return n.input(3) ? std::optional<std::string>("no")
                                                   : std::nullopt;
                               })),
            0);
  EXPECT_EQ(count(kept, OpKind::kQAdd), 1);
  for (const Node *n : kept.nodes()) EXPECT_FALSE(n->input(3)) << n->describe();
}

// The fusion policy's tuned choice (fusion_policy.h): a legal fusion is kept apart exactly
// when its parts' measured cycles together are fewer than the fused node's, and made whenever
// a part or the fused node was not measured; kept apart, the graph computes the same bytes.
TEST(FusionPolicy, MeasuredCyclesKeepAFusionApartOnlyWhenThePartsAreFaster) {
  vacc::isa::HwConfig config;
  // Cycles by form: the add 10, each convolution alone 100, the fused convolution `fused`.
  auto policy = [&](std::optional<uint64_t> fused, std::optional<uint64_t> add,
                    std::vector<bool> *told) {
    FusionPolicy p(vacc::lower::accel_legality(config));
    p.measured = [=](const Node &n) -> std::optional<uint64_t> {
      if (n.op == OpKind::kQAdd) return add;
      return n.input(3) ? fused : std::optional<uint64_t>(100);
    };
    p.decided = [told](const Node &, bool apart, bool, std::optional<uint64_t>,
                       std::optional<uint64_t>) { told->push_back(apart); };
    return p;
  };
  struct Case {
    std::optional<uint64_t> fused, add;
    bool apart;
  };
  for (const Case &c : {Case{200, 10, true}, Case{109, 10, false}, Case{111, 10, true},
                        Case{200, std::nullopt, false}, Case{std::nullopt, 10, false}}) {
    Graph g = compiled_small_cnn(config);
    std::vector<bool> told;
    EXPECT_EQ(fuse_residual_adds(g, policy(c.fused, c.add, &told)), c.apart ? 0 : 1);
    EXPECT_EQ(count(g, OpKind::kQAdd), c.apart ? 1 : 0);
    EXPECT_EQ(told, std::vector<bool>{c.apart});
    pack_layout(g, config);
    Graph plain = compiled_small_cnn(config);
    pack_layout(plain, config);
    const Tensor input = random_tensor(DType::kFloat32, {2, 3, 6, 6}, 430);
    EXPECT_TRUE(
        same_bytes(ReferenceExecutor(plain).run({input})[0], ReferenceExecutor(g).run({input})[0]));
  }
  // keep_apart: no fusion even where legal (how `vacc tune` finds the parts' workloads).
  Graph g = compiled_small_cnn(config);
  FusionPolicy apart(vacc::lower::accel_legality(config));
  apart.keep_apart = true;
  EXPECT_EQ(fuse_residual_adds(g, apart), 0);
  EXPECT_EQ(count(g, OpKind::kQAdd), 1);
}

// The same for a pool: measured faster apart, the folded stem keeps its pool (and its windowed
// pack no replicated edge); measured faster fused, it fuses.
TEST(FusionPolicy, APoolStaysApartWhenItsPartsAreFaster) {
  vacc::isa::HwConfig config;
  for (bool faster_apart : {true, false}) {
    Graph g = partitioned(pooled_cnn(), pooled_calib(), config);
    ASSERT_EQ(fold_windows(g, config, vacc::lower::window_folding(config)), 1);
    FusionPolicy p(vacc::lower::accel_legality(config));
    p.measured = [&](const Node &n) -> std::optional<uint64_t> {
      if (n.op == OpKind::kMaxPool) return 50;
      return n.attrs.has("pool_kernel_shape") ? (faster_apart ? 151 : 149) : 100;
    };
    EXPECT_EQ(fuse_pools(g, p), faster_apart ? 0 : 1);
    EXPECT_EQ(count(g, OpKind::kMaxPool), faster_apart ? 1 : 0);
    for (const Node *n : g.nodes())
      if (n->op == OpKind::kPackNCHWnc) EXPECT_EQ(n->attrs.has("replicate_pads"), !faster_apart);
  }
}

TEST(FuseResidualAdds, AnUnstridedProducerTakesTheAddBeforeAStridedOne) {
  vacc::isa::HwConfig config;
  Graph g;
  Value *x = g.add_value("x", DType::kInt8, {1, 16, 8, 8});
  Value *y = g.add_value("y", DType::kInt8, {1, 16, 4, 4});
  g.add_input(x);
  g.add_input(y);
  auto qconv = [&](const std::string &name, Value *in, int64_t stride) {
    Attributes a;
    a.set("shifts", std::vector<int64_t>{6});
    a.set("strides", std::vector<int64_t>{stride, stride});
    Value *w = g.add_constant(name + ".w", random_tensor(DType::kInt8, {16, 16, 1, 1}, 9));
    Value *out = g.add_value(name, DType::kInt8, {});
    Node *n = g.add_node(OpKind::kQConv, name, {in, w, nullptr}, {out}, a);
    infer_node(*n);
    n->target = Target::kAccel;
    return out;
  };
  Value *unstrided = qconv("body", y, 1);
  Value *strided = qconv("downsample", x, 2);  // later, same reduction: the tie-break's pick
  Attributes aa;
  aa.set("rshift", int64_t{1});
  Value *sum = add_op(g, OpKind::kQAdd, "add", {unstrided, strided}, aa);
  sum->producer->target = Target::kAccel;
  g.add_output(sum);
  EXPECT_EQ(fuse_residual_adds(g, vacc::lower::accel_legality(config)), 1);
  EXPECT_EQ(sum->producer->name, "body");
  EXPECT_EQ(sum->producer->input(3), strided);
}

TEST(FuseResidualAdds, SkipOfAnotherShapeNamesBoth) {
  Graph g;
  Value *x = g.add_value("x", DType::kInt8, {1, 16, 4, 4});
  Value *skip = g.add_value("skip", DType::kInt8, {1, 16, 2, 2});
  g.add_input(x);
  g.add_input(skip);
  Value *w = g.add_constant("w", random_tensor(DType::kInt8, {16, 16, 1, 1}, 7));
  Value *out = g.add_value("y", DType::kInt8, {});
  Attributes a;
  a.set("shifts", std::vector<int64_t>{8});
  Node *conv = g.add_node(OpKind::kQConv, "q", {x, w, nullptr, skip}, {out}, a);
  try {
    infer_node(*conv);
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "residual input 'skip' i8 [1,16,2,2] must be int8 of the output's shape "
                  "[1,16,4,4]"),
              std::string::npos)
        << e.what();
  }
}

// Requantize -> DequantizeLinear -> Clip(0, 6) -> QuantizeLinear at scale 2^-f: ReLU6
// between quantized operators, as MobileNetV2 exports it.
Graph relu6_chain(int frac_bits, float lo, float hi) {
  Graph g;
  g.name = "relu6";
  Value *x = g.add_value("x", DType::kInt32, {1, 4, 5, 5});
  g.add_input(x);
  Attributes rq;
  rq.set("shifts", std::vector<int64_t>{6});
  Value *r = add_op(g, OpKind::kRequantize, "r", {x}, rq);
  Tensor scale(DType::kFloat32, {});
  scale.data<float>()[0] = std::ldexp(1.0f, -frac_bits);
  Tensor zp(DType::kInt8, {});
  zp.data<int8_t>()[0] = 0;
  Value *s = g.add_constant("scale", scale), *z = g.add_constant("zp", zp);
  Value *dq = add_op(g, OpKind::kDequantizeLinear, "dq", {r, s, z});
  Tensor tlo(DType::kFloat32, {}), thi(DType::kFloat32, {});
  tlo.data<float>()[0] = lo;
  thi.data<float>()[0] = hi;
  Value *c =
      add_op(g, OpKind::kClip, "clip", {dq, g.add_constant("lo", tlo), g.add_constant("hi", thi)});
  g.add_output(add_op(g, OpKind::kQuantizeLinear, "q", {c, s, z}));
  return g;
}

TEST(Fuse, ClipBetweenDequantizeAndQuantizeBecomesTheIntegerClip) {
  for (int f : {3, 4, 5}) {
    Graph plain = relu6_chain(f, 0.0f, 6.0f);
    Graph fused = relu6_chain(f, 0.0f, 6.0f);
    EXPECT_EQ(fuse(fused), 1);
    ASSERT_EQ(fused.num_nodes(), 1);
    const Node *r = fused.nodes()[0];
    EXPECT_EQ(r->attrs.get_int("clip_min"), 0);
    EXPECT_EQ(r->attrs.get_int("clip_max"), std::min(127, 6 << f)) << "6 * 2^" << f;
    Tensor in = random_tensor(DType::kInt32, {1, 4, 5, 5}, 70 + f);
    for (int64_t i = 0; i < in.size(); ++i) in.data<int32_t>()[i] *= 3;  // past both bounds
    EXPECT_TRUE(
        same_bytes(ReferenceExecutor(plain).run({in})[0], ReferenceExecutor(fused).run({in})[0]))
        << f;
  }
  // Bounds between two integers round as QuantizeLinear does; the chain is still exact.
  Graph plain = relu6_chain(2, -1.3f, 2.6f), fused = relu6_chain(2, -1.3f, 2.6f);
  EXPECT_EQ(fuse(fused), 1);
  EXPECT_EQ(fused.nodes()[0]->attrs.get_int("clip_min"), -5);
  EXPECT_EQ(fused.nodes()[0]->attrs.get_int("clip_max"), 10);
  Tensor in = random_tensor(DType::kInt32, {1, 4, 5, 5}, 77);
  EXPECT_TRUE(
      same_bytes(ReferenceExecutor(plain).run({in})[0], ReferenceExecutor(fused).run({in})[0]));
}

TEST(PlanMemory, LiveTensorsNeverOverlapAndBuffersAreReused) {
  Graph g;
  g.name = "chain";
  Value *v = g.add_value("x", DType::kFloat32, {1, 1000});
  g.add_input(v);
  std::vector<Value *> values = {v};
  for (int i = 0; i < 6; ++i) {
    v = add_op(g, OpKind::kRelu, "r" + std::to_string(i), {v});
    values.push_back(v);
  }
  Value *y = add_op(g, OpKind::kAdd, "skip", {values[2], v});  // keeps r1 alive to the end
  g.add_output(y);
  MemoryPlan plan = plan_memory(g);
  EXPECT_EQ(plan.slots.size(), 8u);
  EXPECT_LT(plan.arena_bytes, plan.total_bytes);
  for (const auto &[a, sa] : plan.slots) {
    EXPECT_EQ(sa.offset % 64, 0);
    for (const auto &[b, sb] : plan.slots) {
      if (a == b) continue;
      bool live_together = sa.first <= sb.last && sb.first <= sa.last;
      bool overlap = sa.offset < sb.offset + sb.bytes && sb.offset < sa.offset + sa.bytes;
      EXPECT_FALSE(live_together && overlap) << a->name << " and " << b->name;
    }
  }
  EXPECT_EQ(plan.slots.at(values[2]).last, 6);  // read by the final Add, node 6
}

// Regression: remove_dead_nodes once assumed a sorted node list and dropped live nodes
// appended by a pass (found on ResNet-18's quantization).
TEST(GraphIR, RemoveDeadNodesDoesNotNeedTopologicalOrder) {
  Graph g;
  g.name = "order";
  Value *x = g.add_value("x", DType::kFloat32, {4});
  g.add_input(x);
  Value *mid = g.add_value("mid", DType::kFloat32, {4});
  Value *y = g.add_value("y", DType::kFloat32, {4});
  g.add_node(OpKind::kRelu, "second", {mid}, {y});  // appended before its producer
  g.add_node(OpKind::kRelu, "first", {x}, {mid});
  g.add_node(OpKind::kRelu, "dead", {x}, {g.add_value("unused", DType::kFloat32, {4})});
  g.add_output(y);
  g.remove_dead_nodes();
  EXPECT_EQ(g.num_nodes(), 2u);
  g.sort_topologically();
  g.verify();
  EXPECT_EQ(g.nodes()[0]->name, "first");
}

TEST(Printer, DeterministicText) {
  Graph g;
  g.name = "p";
  Value *x = g.add_value("x", DType::kFloat32, {1, 4});
  g.add_input(x);
  Attributes a;
  a.set("alpha", 0.5f);
  Value *y = add_op(g, OpKind::kLeakyRelu, "y", {x}, a);
  g.add_output(y);
  EXPECT_EQ(print_graph(g),
            "graph p (%x: f32[1,4]) {\n"
            "  %y: f32[1,4] = LeakyRelu[alpha=0.5](%x)\n"
            "  return %y\n"
            "}\n");
}

}  // namespace
