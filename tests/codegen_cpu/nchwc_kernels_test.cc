// The CPU backend's blocked layout (graph/passes/block_cpu_layout.h) and its kernels
// (vacc.ConvNCHWc dense and depthwise, blocked MaxPool and GlobalAveragePool, the fused
// residual add and activation): each graph is built twice, one copy run plain by the graph
// reference executor, the other blocked by the pass and run by the CPU executor's kernels; the
// outputs must agree to 1e-5 of the output's largest magnitude. The cases cover what the
// register tiles and the padding inside the kernels must get right: pads on every side and
// asymmetric ones, strides, dilation, widths no tile divides, channel counts that are not
// whole blocks (a tail block of input channels, padded output blocks), a plain few-channel
// input, batches of two, pointwise convolutions read as one row. The dense convolutions run
// on one, two and three threads, whose kernels cut the output into different parallel tasks
// (ops/conv/cpu_nchwc_plan.h: a flat image into rows, blocks of fewer rows, other tiles).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "ops/conv/cpu_nchwc_plan.h"
#include "vacc/codegen/cpu/jit.h"
#include "vacc/codegen/cpu/thread_pool.h"
#include "vacc/graph/graph.h"
#include "vacc/graph/passes/block_cpu_layout.h"
#include "vacc/graph/passes/fuse_activations.h"
#include "vacc/graph/passes/fuse_conv_adds.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/ops/cpu/executor.h"
#include "vacc/ops/cpu/ops.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/printer.h"

using namespace vacc::graph;

namespace {

Tensor random_floats(Shape shape, unsigned seed) {
  Tensor t(DType::kFloat32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// A small graph builder: values get their shapes by inference as nodes are added.
struct Builder {
  Graph g;
  unsigned seed = 11;
  Value *input(Shape shape) {
    Value *x = g.add_value("x", DType::kFloat32, std::move(shape));
    g.add_input(x);
    return x;
  }
  Value *node(OpKind op, std::vector<Value *> ins, Attributes at = {}) {
    Value *y = g.add_value(g.unique_name("v"), DType::kFloat32, {});
    infer_node(*g.add_node(op, y->name, std::move(ins), {y}, std::move(at)));
    return y;
  }
  Value *conv(Value *x, int64_t m, int64_t k, int64_t stride = 1, std::vector<int64_t> pads = {},
              int64_t group = 1, int64_t dilation = 1, bool bias = true) {
    Attributes at;
    at.set("strides", std::vector<int64_t>{stride, stride});
    at.set("dilations", std::vector<int64_t>{dilation, dilation});
    at.set("pads", pads.empty() ? std::vector<int64_t>(4, k / 2 * dilation) : pads);
    at.set("group", group);
    std::vector<Value *> ins = {
        x,
        g.add_constant(g.unique_name("w"), random_floats({m, x->shape[1] / group, k, k}, seed++))};
    if (bias) ins.push_back(g.add_constant(g.unique_name("b"), random_floats({m}, seed++)));
    return node(OpKind::kConv, ins, at);
  }
  Value *relu(Value *x) { return node(OpKind::kRelu, {x}); }
  Value *clip(Value *x, float lo, float hi) {
    Tensor l(DType::kFloat32, {}), h(DType::kFloat32, {});
    l.data<float>()[0] = lo;
    h.data<float>()[0] = hi;
    return node(OpKind::kClip, {x, g.add_constant(g.unique_name("lo"), l),
                                g.add_constant(g.unique_name("hi"), h)});
  }
  Value *max_pool(Value *x, int64_t k, int64_t s, std::vector<int64_t> pads, bool ceil = false) {
    Attributes at;
    at.set("kernel_shape", std::vector<int64_t>{k, k});
    at.set("strides", std::vector<int64_t>{s, s});
    at.set("pads", pads);
    at.set("ceil_mode", int64_t{ceil});
    return node(OpKind::kMaxPool, {x}, at);
  }
};

// Runs build() twice: plain on the reference executor, blocked on the CPU backend with kernels
// built for and run on each number of threads in `threads`.
void expect_blocked_matches_plain(const std::function<void(Builder &)> &build, int min_converted,
                                  const std::vector<int> &threads = {0}) {
  Builder plain, blocked;
  build(plain);
  build(blocked);
  Graph &g = blocked.g;
  const int converted = block_cpu_layout(g, 16);
  fuse_conv_adds(g);
  fuse_activations(g);
  EXPECT_GE(converted, min_converted) << print_graph(g);
  const std::vector<Tensor> inputs = {random_floats(plain.g.inputs()[0]->shape, 5)};
  const Tensor want = ReferenceExecutor(plain.g).run(inputs)[0];
  // The reference of the blocked operators themselves (graph/ops), and the CPU kernels.
  const Tensor ref_blocked = ReferenceExecutor(g).run(inputs)[0];
  ASSERT_EQ(ref_blocked.shape(), want.shape());
  double ref = 0;
  for (int64_t i = 0; i < want.size(); ++i) ref = std::max(ref, std::abs(want.as_double(i)));
  for (int64_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(ref_blocked.as_double(i), want.as_double(i), 1e-5 * ref) << "reference " << i;
  for (int t : threads) {
    vacc::codegen::cpu::set_num_threads(t);
    const Tensor got = vacc::ops::cpu::CpuExecutor(g).run(inputs)[0];
    vacc::codegen::cpu::set_num_threads(0);
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got.as_double(i), want.as_double(i), 1e-5 * ref)
          << "element " << i << " on " << t << " threads\n"
          << print_graph(g);
  }
}

int count(const Graph &g, OpKind op) {
  int n = 0;
  for (const Node *node : g.nodes()) n += node->op == op;
  return n;
}

struct DenseCase {
  const char *name;
  int64_t n, c, m, h, w, k, stride, dilation;
  std::vector<int64_t> pads;  // top, left, bottom, right; empty: k/2 on every side
  int64_t group = 1;
};

class BlockedDense : public ::testing::TestWithParam<DenseCase> {};

TEST_P(BlockedDense, MatchesThePlainReference) {
  const DenseCase &p = GetParam();
  expect_blocked_matches_plain(
      [&](Builder &b) {
        Value *x = b.input({p.n, p.c, p.h, p.w});
        b.g.add_output(b.conv(x, p.m, p.k, p.stride, p.pads, p.group, p.dilation));
      },
      1, {1, 2, 3});
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BlockedDense,
    ::testing::Values(
        DenseCase{"3x3_stride1_width_20", 1, 32, 64, 20, 20, 3, 1, 1, {}},
        DenseCase{"3x3_stride2_three_blocks", 1, 16, 48, 15, 15, 3, 2, 1, {}},
        DenseCase{"stem_7x7_plain_input", 1, 3, 32, 40, 38, 7, 2, 1, {}},
        DenseCase{"stem_7x7_unpadded_width_109", 1, 3, 96, 29, 223, 7, 2, 1, {0, 0, 0, 0}},
        DenseCase{"pointwise_tail_block_flat", 2, 24, 40, 9, 9, 1, 1, 1, {0, 0, 0, 0}},
        DenseCase{"pointwise_rows", 1, 24, 40, 5, 28, 1, 1, 1, {0, 0, 0, 0}},
        DenseCase{"pointwise_stride2", 1, 32, 64, 14, 14, 1, 2, 1, {0, 0, 0, 0}},
        DenseCase{"dilated_3x3", 1, 16, 16, 18, 17, 3, 1, 2, {}},
        DenseCase{"asymmetric_pads", 1, 24, 48, 13, 13, 3, 1, 1, {1, 0, 0, 1}},
        DenseCase{"channels_1000", 1, 16, 1000, 13, 13, 1, 1, 1, {0, 0, 0, 0}},
        DenseCase{"3x3_7x7_512_narrow", 1, 64, 128, 7, 7, 3, 1, 1, {}},
        DenseCase{"5x5_pad_wider_than_stride", 2, 8, 24, 11, 12, 5, 2, 1, {2, 2, 2, 2}},
        // One task on one thread, cut for more: a flat image into rows, a channel tile of
        // few blocks, rows in blocks of 7 rather than 8.
        DenseCase{"pointwise_14x14_one_tile", 1, 192, 64, 14, 14, 1, 1, 1, {0, 0, 0, 0}},
        DenseCase{"pointwise_14x14_one_block", 1, 192, 16, 14, 14, 1, 1, 1, {0, 0, 0, 0}},
        DenseCase{"pointwise_7x7_five_tiles", 1, 96, 160, 7, 7, 1, 1, 1, {0, 0, 0, 0}},
        DenseCase{"pointwise_28x28_four_row_blocks", 1, 48, 32, 28, 28, 1, 1, 1, {0, 0, 0, 0}},
        DenseCase{"3x3_7x7_one_tile", 1, 32, 32, 7, 7, 3, 1, 1, {}},
        // Groups of whole blocks (RegNet's 16-channel groups; ResNeXt's wider ones): each
        // output block reads its own group's input blocks only.
        DenseCase{"groups_of_one_block", 1, 64, 64, 14, 14, 3, 1, 1, {}, 4},
        DenseCase{"groups_of_one_block_stride2", 2, 48, 48, 15, 15, 3, 2, 1, {}, 3},
        DenseCase{"groups_of_two_blocks_wider_out", 1, 64, 128, 9, 20, 3, 1, 1, {}, 2},
        DenseCase{"groups_pointwise", 1, 96, 48, 10, 10, 1, 1, 1, {0, 0, 0, 0}, 3}),
    [](const auto &info) { return std::string(info.param.name); });

// Each Prefetch of the weight panels becomes hits[line] += 1 (line: the panel's 64-byte cache
// line), so that running the kernel counts what it fetches.
class CountPanelPrefetches : public vacc::tir::Mutator {
 public:
  CountPanelPrefetches(vacc::tir::Buffer panels, vacc::tir::Buffer hits)
      : panels_(std::move(panels)), hits_(std::move(hits)) {}

 protected:
  using Stmt = vacc::tir::Stmt;
  using Expr = vacc::tir::Expr;
  Stmt mutate_Prefetch(const vacc::tir::Prefetch *op, const Stmt &self) override {
    if (op->buffer != panels_) return self;
    const std::vector<int64_t> strides = panels_->strides();
    Expr flat = vacc::tir::cast(vacc::tir::int64(), Expr(0));
    for (size_t i = 0; i < strides.size(); ++i)
      flat = flat + vacc::tir::cast(vacc::tir::int64(), op->indices[i]) *
                        vacc::tir::IntImm::make(vacc::tir::int64(), strides[i]);
    const Expr line = flat / vacc::tir::IntImm::make(vacc::tir::int64(), 16);
    return vacc::tir::Store::make(hits_, {line}, vacc::tir::load(hits_, {line}) + 1);
  }

 private:
  vacc::tir::Buffer panels_, hits_;
};

// A dense convolution whose weights are larger than a chunk fetches the next chunk's weights
// while it computes this one (conv_nchwc.cc): every cache line of the panels but those of the
// very first chunk is fetched, once per task (a channel tile's block of 8 rows) that runs the
// chunk before it, and only by the first tile of each row (16 columns: an edge tile, a loop
// over interior tiles, an edge tile).
TEST(BlockedDenseKernel, FetchesEveryLineOfTheNextChunkOncePerTask) {
  Builder b;
  Value *x = b.input({1, 64, 16, 16});
  b.g.add_output(b.conv(x, 128, 3));
  block_cpu_layout(b.g, 16);
  const Node *conv = nullptr;
  for (const Node *n : b.g.nodes())
    if (n->op == OpKind::kConvNCHWc) conv = n;
  ASSERT_NE(conv, nullptr) << print_graph(b.g);
  vacc::codegen::cpu::set_num_threads(1);
  vacc::ops::cpu::CpuKernel k = vacc::ops::cpu::build_kernel(*conv);
  vacc::codegen::cpu::set_num_threads(0);

  // The fetches sit in the loops over kernel rows, spread over the chunk's computation.
  int prefetches = 0, in_kernel_rows = 0;
  auto count_prefetches = [](const vacc::tir::Stmt &s, int &n) {
    vacc::tir::for_each_stmt(
        s, [&](const vacc::tir::Stmt &t) { n += t.as<vacc::tir::Prefetch>() != nullptr; });
  };
  count_prefetches(k.func.body, prefetches);
  vacc::tir::for_each_stmt(k.func.body, [&](const vacc::tir::Stmt &t) {
    if (const auto *loop = t.as<vacc::tir::For>(); loop && loop->var->name == "kh")
      count_prefetches(loop->body, in_kernel_rows);
  });
  EXPECT_GT(prefetches, 0);
  EXPECT_EQ(in_kernel_rows, prefetches) << vacc::tir::to_string(k.func);

  std::vector<vacc::tir::Buffer> params = k.func.params;
  vacc::tir::Buffer panels;
  for (const auto &p : params)
    if (p->name == "w_panels") panels = p;
  ASSERT_TRUE(panels) << vacc::tir::to_string(k.func);
  const int64_t lines = panels->elems() / 16;
  const auto hits = vacc::tir::make_buffer("hits", vacc::tir::int32(), {lines});
  params.push_back(hits);
  const vacc::tir::Func counted{"counted", params,
                                CountPanelPrefetches(panels, hits).mutate(k.func.body)};

  // Arguments: the node's three inputs (the weights and bias as unused placeholders), the
  // kernel's constants, y, then the counters.
  std::vector<std::vector<uint8_t>> storage;
  const size_t first_constant = params.size() - 2 - k.constants.size();
  for (size_t i = 0; i < params.size(); ++i) {
    const size_t c = i - first_constant;
    if (i >= first_constant && c < k.constants.size())
      storage.emplace_back(k.constants[c].raw(), k.constants[c].raw() + k.constants[c].nbytes());
    else
      storage.emplace_back(params[i]->elems() * params[i]->dtype.bits / 8, 0);
  }
  std::vector<void *> args;
  for (auto &s : storage) args.push_back(s.data());
  vacc::codegen::cpu::Jit::global().compile(counted)->run(args);

  // One input block's weights per chunk (two would pass 32 KiB): 16 channels x 3 x 3 x the
  // tile's output channels.
  const int64_t chunk_lines = 16 * 3 * 3 * panels->shape[5] / 16;
  const auto *count = reinterpret_cast<const int32_t *>(storage.back().data());
  const int64_t row_blocks = 2;  // 16 rows in blocks of 8
  for (int64_t l = 0; l < lines; ++l)
    ASSERT_EQ(count[l], l < chunk_lines ? 0 : row_blocks)
        << "line " << l << " of " << lines << " (" << chunk_lines << " per chunk)";
}

struct DepthwiseCase {
  const char *name;
  int64_t c, h, w, k, stride;
};

class BlockedDepthwise : public ::testing::TestWithParam<DepthwiseCase> {};

TEST_P(BlockedDepthwise, MatchesThePlainReference) {
  const DepthwiseCase &p = GetParam();
  expect_blocked_matches_plain(
      [&](Builder &b) {
        Value *x = b.input({1, 16, p.h, p.w});
        Value *e = b.clip(b.conv(x, p.c, 1), 0.0f, 6.0f);  // expansion, ReLU6
        b.g.add_output(b.clip(b.conv(e, p.c, p.k, p.stride, {}, p.c), 0.0f, 6.0f));
      },
      2);
}

INSTANTIATE_TEST_SUITE_P(Shapes, BlockedDepthwise,
                         ::testing::Values(DepthwiseCase{"3x3_stride1", 32, 14, 14, 3, 1},
                                           DepthwiseCase{"3x3_stride2_tail", 24, 15, 16, 3, 2},
                                           DepthwiseCase{"5x5_stride1", 40, 9, 11, 5, 1},
                                           DepthwiseCase{"3x3_wide", 16, 4, 57, 3, 1}),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(BlockedLayout, ResidualAddAndReluFuseIntoTheConvolution) {
  auto build = [](Builder &b) {
    Value *x = b.input({1, 24, 12, 12});
    Value *y = b.relu(b.conv(x, 24, 3));
    Value *z = b.conv(y, 24, 3);
    b.g.add_output(b.relu(b.node(OpKind::kAdd, {z, y})));
  };
  expect_blocked_matches_plain(build, 3);
  Builder b;
  build(b);
  block_cpu_layout(b.g, 16);
  EXPECT_EQ(fuse_conv_adds(b.g), 1);
  EXPECT_EQ(fuse_activations(b.g), 2);  // the first convolution's and the one after the add
  EXPECT_EQ(count(b.g, OpKind::kAdd), 0);
  EXPECT_EQ(count(b.g, OpKind::kRelu), 0);
  EXPECT_EQ(count(b.g, OpKind::kConvNCHWc), 2);
  EXPECT_EQ(count(b.g, OpKind::kUnpackNCHWnc), 1);
}

// SiLU as PyTorch exports it, Conv -> Sigmoid -> Mul(conv, sigmoid) (either operand order),
// becomes the blocked convolution's activation, also after a fused residual add; a sigmoid
// that something else reads too keeps both steps.
TEST(BlockedLayout, SiluFusesIntoTheConvolution) {
  auto silu = [](Builder &b, Value *v, bool sigmoid_first) {
    Value *s = b.node(OpKind::kSigmoid, {v});
    return b.node(OpKind::kMul,
                  sigmoid_first ? std::vector<Value *>{s, v} : std::vector<Value *>{v, s});
  };
  auto build = [&](Builder &b) {
    Value *x = b.input({1, 24, 11, 12});
    Value *y = silu(b, b.conv(x, 32, 3), true);
    Value *z = silu(b, b.node(OpKind::kAdd, {b.conv(y, 32, 3), y}), false);
    Value *c = b.conv(z, 16, 1);
    Value *s = b.node(OpKind::kSigmoid, {c});  // read by the Mul and by the Add
    b.g.add_output(b.node(OpKind::kAdd, {b.node(OpKind::kMul, {c, s}), s}));
  };
  expect_blocked_matches_plain(build, 3, {1, 2});
  Builder b;
  build(b);
  block_cpu_layout(b.g, 16);
  EXPECT_EQ(fuse_conv_adds(b.g), 1);
  EXPECT_EQ(fuse_activations(b.g), 2);
  EXPECT_EQ(count(b.g, OpKind::kSigmoid), 1) << print_graph(b.g);
  EXPECT_EQ(count(b.g, OpKind::kMul), 1);
  int silus = 0;
  for (const Node *n : b.g.nodes()) silus += n->attrs.get_string("activation", "") == "silu";
  EXPECT_EQ(silus, 2);
}

// HardSwish, as PyTorch exports it at opset 13 (HardSigmoid(1/6, 0.5) -> Mul) and as opset 14's
// own operator, becomes the convolution's activation; a squeeze-excitation block (global pool,
// two pointwise convolutions, a sigmoid gate, the input scaled per channel) stays blocked, its
// per-channel Mul broadcasting the gate [N, C/16, 1, 1, 1, 16] over the blocked image.
TEST(BlockedLayout, HardSwishFusesAndSqueezeExcitationStaysBlocked) {
  auto build = [](Builder &b) {
    Value *x = b.input({1, 32, 9, 10});
    Value *c = b.conv(x, 48, 3);
    Attributes hs;
    hs.set("alpha", 1.0f / 6);
    hs.set("beta", 0.5f);
    Value *y = b.node(OpKind::kMul, {c, b.node(OpKind::kHardSigmoid, {c}, hs)});
    Value *z = b.node(OpKind::kHardSwish, {b.conv(y, 48, 3)});
    Value *pooled = b.node(OpKind::kGlobalAveragePool, {z});
    Value *gate = b.node(OpKind::kSigmoid, {b.conv(b.relu(b.conv(pooled, 16, 1)), 48, 1)});
    Value *scaled = b.node(OpKind::kMul, {z, gate});
    b.g.add_output(b.conv(scaled, 16, 1));
  };
  expect_blocked_matches_plain(build, 5, {1, 2});
  Builder b;
  build(b);
  block_cpu_layout(b.g, 16);
  fuse_conv_adds(b.g);
  fuse_activations(b.g);
  int hardswish = 0;
  for (const Node *n : b.g.nodes())
    hardswish += n->attrs.get_string("activation", "") == "hardswish";
  EXPECT_EQ(hardswish, 2) << print_graph(b.g);
  EXPECT_EQ(count(b.g, OpKind::kHardSigmoid), 0);
  EXPECT_EQ(count(b.g, OpKind::kHardSwish), 0);
  EXPECT_EQ(count(b.g, OpKind::kMul), 1);           // the per-channel scaling, blocked:
  EXPECT_EQ(count(b.g, OpKind::kUnpackNCHWnc), 1);  // only the output is unpacked
  EXPECT_EQ(count(b.g, OpKind::kPackNCHWnc), 1);    // only the input is packed
}

// A BatchNormalization no convolution folded (DenseNet's, after each concatenation) runs
// blocked as a depthwise 1x1 convolution, with the ReLU after it as its activation.
TEST(BlockedLayout, BatchNormOnABlockedImageIsADepthwiseConvolution) {
  auto build = [](Builder &b) {
    Value *x = b.input({2, 16, 7, 9});
    Value *c = b.node(OpKind::kConcat, {b.conv(x, 32, 3), b.conv(x, 16, 1)}, [] {
      Attributes a;
      a.set("axis", int64_t{1});
      return a;
    }());
    std::vector<Value *> ins = {c};
    for (int i = 0; i < 4; ++i) {
      Tensor t = random_floats({48}, 40 + i);
      if (i == 3)  // the variance: positive
        for (int64_t k = 0; k < t.size(); ++k)
          t.data<float>()[k] = std::abs(t.data<float>()[k]) + 0.1f;
      ins.push_back(b.g.add_constant(b.g.unique_name("bn"), std::move(t)));
    }
    Attributes eps;
    eps.set("epsilon", 1e-3f);
    b.g.add_output(b.conv(b.relu(b.node(OpKind::kBatchNormalization, ins, eps)), 16, 3));
  };
  expect_blocked_matches_plain(build, 4, {1, 2});
  Builder b;
  build(b);
  block_cpu_layout(b.g, 16);
  fuse_activations(b.g);
  EXPECT_EQ(count(b.g, OpKind::kBatchNormalization), 0) << print_graph(b.g);
  EXPECT_EQ(count(b.g, OpKind::kRelu), 0);
  EXPECT_EQ(count(b.g, OpKind::kConvNCHWc), 4);
  EXPECT_EQ(count(b.g, OpKind::kUnpackNCHWnc), 1);
  // The normalization adds no MACs to the model's count (utilization counts the model's own).
  int without_macs = 0;
  for (const Node *n : b.g.nodes()) without_macs += n->model_macs == int64_t{0};
  EXPECT_EQ(without_macs, 1);
}

// AveragePool runs blocked where every window divides by its whole size (DenseNet's transitions:
// 2x2, stride 2, no padding; a padded window with count_include_pad); one whose edge windows
// divide by fewer (padding not counted) stays plain, between an unpack and a pack.
TEST(BlockedLayout, AveragePoolsOfWholeWindowsComputeBlocked) {
  auto avg = [](Builder &b, Value *x, int64_t k, int64_t s, int64_t pad, int64_t include_pad) {
    Attributes at;
    at.set("kernel_shape", std::vector<int64_t>{k, k});
    at.set("strides", std::vector<int64_t>{s, s});
    at.set("pads", std::vector<int64_t>(4, pad));
    at.set("count_include_pad", include_pad);
    return b.node(OpKind::kAveragePool, {x}, at);
  };
  auto build = [&](Builder &b) {
    Value *x = b.input({2, 24, 13, 14});
    Value *y = avg(b, b.conv(x, 32, 1), 2, 2, 0, 0);
    Value *z = avg(b, b.conv(y, 32, 3), 3, 1, 1, 1);
    Value *w = avg(b, b.conv(z, 16, 3), 3, 1, 1, 0);
    b.g.add_output(b.conv(w, 16, 1));
  };
  expect_blocked_matches_plain(build, 6, {1, 2});
  Builder b;
  build(b);
  block_cpu_layout(b.g, 16);
  int blocked_pools = 0;
  for (const Node *n : b.g.nodes())
    blocked_pools += n->op == OpKind::kAveragePool && n->inputs[0]->layout.blocked;
  EXPECT_EQ(blocked_pools, 2) << print_graph(b.g);
  EXPECT_EQ(count(b.g, OpKind::kUnpackNCHWnc), 2);  // before the third pool and the output
}

TEST(BlockedLayout, PoolingConcatAndBatches) {
  expect_blocked_matches_plain(
      [](Builder &b) {
        Value *x = b.input({2, 3, 31, 29});
        Value *c = b.relu(b.conv(x, 32, 3, 2, {0, 0, 0, 0}));
        Value *p = b.max_pool(c, 3, 2, {0, 0, 0, 0}, true);  // SqueezeNet's
        Value *s = b.relu(b.conv(p, 16, 1));
        Value *e1 = b.relu(b.conv(s, 16, 1)), *e3 = b.relu(b.conv(s, 24, 3));
        Attributes cat;
        cat.set("axis", int64_t{1});
        Value *f = b.node(OpKind::kConcat, {e1, e3}, cat);
        Value *q = b.max_pool(f, 3, 2, {1, 1, 1, 1});  // ResNet's
        b.g.add_output(b.node(OpKind::kGlobalAveragePool, {b.conv(q, 40, 1)}));
      },
      9);
}

TEST(BlockedLayout, ConcatWithAPartialBlockFirstStaysPlain) {
  Builder b;
  Value *x = b.input({1, 8, 6, 6});
  Attributes cat;
  cat.set("axis", int64_t{1});
  b.g.add_output(b.node(OpKind::kConcat, {b.conv(x, 24, 3), b.conv(x, 16, 3)}, cat));
  block_cpu_layout(b.g, 16);
  EXPECT_EQ(count(b.g, OpKind::kUnpackNCHWnc), 2);  // 24 channels are no whole number of blocks
  expect_blocked_matches_plain(
      [](Builder &c) {
        Value *y = c.input({1, 8, 6, 6});
        Attributes at;
        at.set("axis", int64_t{1});
        c.g.add_output(c.node(OpKind::kConcat, {c.conv(y, 24, 3), c.conv(y, 16, 3)}, at));
      },
      2);
}

// The parallel plans themselves: one thread keeps the plan of one core (a flat image as one
// row, blocks of up to 8 rows); more threads get at least as many tasks as threads where one
// thread had fewer, and a flat image read as rows that divide it.
vacc::ops::cpu::ConvGeometry pointwise(int64_t c, int64_t m, int64_t hw) {
  vacc::ops::cpu::ConvGeometry g;
  g.C = c;
  g.M = m;
  g.H = g.W = g.OH = g.OW = hw;
  g.in_block = 16;
  g.flat = hw <= 16;
  return g;
}

TEST(BlockedDensePlan, OneThreadKeepsTheOneCorePlan) {
  for (const auto &g : {pointwise(192, 64, 14), pointwise(96, 160, 7), pointwise(48, 32, 28)}) {
    const auto p = vacc::ops::cpu::plan_dense(g, 1);
    const auto tile = vacc::ops::cpu::choose_dense_tile(g);
    EXPECT_EQ(p.geometry.flat_rows, 1);
    EXPECT_EQ(p.block_rows, std::min<int64_t>(g.rows(), 8));
    EXPECT_EQ(p.tile.blocks, tile.blocks);
    EXPECT_EQ(p.tile.columns, tile.columns);
  }
}

TEST(BlockedDensePlan, MoreThreadsGetTheirShareOfTasks) {
  for (const auto &g : {pointwise(192, 64, 14), pointwise(384, 64, 14), pointwise(96, 160, 7),
                        pointwise(48, 32, 28)}) {
    const int64_t one = vacc::ops::cpu::plan_dense(g, 1).tasks();
    for (int threads : {2, 3, 4}) {
      const auto p = vacc::ops::cpu::plan_dense(g, threads);
      if (one < threads) {
        EXPECT_GE(p.tasks(), threads) << g.C << "x" << g.M << "x" << g.OH;
      }
      if (p.geometry.flat) {
        EXPECT_EQ(g.OH * g.OW % p.geometry.flat_rows, 0);
      }
    }
  }
  // 14x14 from 192 to 64 channels: one tile of 4 blocks and one flat row on one thread, with
  // AVX-512's 32 registers of 16 floats (the plan's register model follows the host: with 16
  // registers of 8 floats the tile holds fewer blocks, and the layer has more tasks).
  if (vacc::ops::cpu::registers(16).count == 32)
    EXPECT_EQ(vacc::ops::cpu::plan_dense(pointwise(192, 64, 14), 1).tasks(), 1);
  // To one block of 16 channels, only rows of the flat image can give two threads a share.
  const auto one_block = vacc::ops::cpu::plan_dense(pointwise(192, 16, 14), 2);
  EXPECT_GT(one_block.geometry.flat_rows, 1);
  EXPECT_GE(one_block.tasks(), 2);
}

}  // namespace
