// The accelerator operators' full requantization (per-channel shifts through an ACC vector
// operand, arbitrary clip bounds) and the residual add (vacc.QAdd), each compared with a
// plain C++ reference and the loop-IR interpreter on every test engine, for the default,
// small and wide configs with 1 and 2 virtual threads.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "../expect_error.h"
#include "layer_check.h"
#include "layer_kit.h"
#include "program_kit.h"
#include "reference.h"
#include "vacc/lower/host_layout.h"
#include "vacc/lower/lower.h"
#include "vacc/support/error.h"

namespace vacc {
namespace {

using lower::AddParams;
using lower::AccelSchedule;
using lower::LoweredLayer;
using lower::LowerOptions;

int64_t wrap32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}
// The ALU's shr: arithmetic right shift, a negative amount shifts left (wrapping at 32 bits).
int64_t shr(int64_t v, int64_t s) {
  return s >= 0 ? v >> std::min<int64_t>(s, 31) : wrap32(v << std::min<int64_t>(-s, 31));
}

// (acc + bias) >> shift[o], clipped, narrowed; `acc` from the blocked conv with no requant.
int64_t requant(int64_t acc, int64_t o, const lower::Requant &q) {
  const int64_t s = q.per_channel() ? q.channel_shifts[o] : q.shift;
  const int64_t v = std::min(std::max(shr(wrap32(acc), s), q.lo(8)), q.hi(8));
  return static_cast<int8_t>(v);
}

std::vector<int64_t> conv_reference(const isa::HwConfig &c, const lower::Conv2dParams &p,
                                    const std::vector<int64_t> &data,
                                    const std::vector<int64_t> &kernel,
                                    const std::vector<int64_t> &bias) {
  const int64_t B = c.batch, BO = c.block_out, OB = p.out_channels / BO;
  const int64_t OH = p.out_height(), OW = p.out_width();
  std::vector<int64_t> out(p.batch * p.out_channels * OH * OW);
  const int64_t BI = c.block_in, CB = p.in_channels / BI, KH = p.kernel_h, KW = p.kernel_w;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t o = 0; o < p.out_channels; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t acc = 0;
          for (int64_t ch = 0; ch < p.in_channels; ++ch)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t h = oh * p.stride_h + kh - p.pad_h;
                const int64_t w = ow * p.stride_w + kw - p.pad_w;
                if (h < 0 || h >= p.height || w < 0 || w >= p.width) continue;
                acc += data[((((n / B) * CB + ch / BI) * p.height + h) * p.width + w) * B * BI +
                            (n % B) * BI + ch % BI] *
                       kernel[((((o / BO) * CB + ch / BI) * KH + kh) * KW + kw) * BO * BI +
                              (o % BO) * BI + ch % BI];
              }
          acc += bias[((n / B) * OB + o / BO) * B * BO + (n % B) * BO + o % BO];
          out[((((n / B) * OB + o / BO) * OH + oh) * OW + ow) * B * BO + (n % B) * BO + o % BO] =
              requant(acc, o, p.requant);
        }
  return out;
}

std::vector<int64_t> dense_reference(const isa::HwConfig &c, const lower::DenseParams &p,
                                     const std::vector<int64_t> &data,
                                     const std::vector<int64_t> &weight,
                                     const std::vector<int64_t> &bias) {
  const int64_t B = c.batch, BI = c.block_in, BO = c.block_out;
  const int64_t CB = p.in_features / BI, OB = p.out_features / BO;
  std::vector<int64_t> out(p.batch * p.out_features);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t o = 0; o < p.out_features; ++o) {
      int64_t acc = 0;
      for (int64_t ch = 0; ch < p.in_features; ++ch)
        acc += data[((n / B) * CB + ch / BI) * B * BI + (n % B) * BI + ch % BI] *
               weight[((o / BO) * CB + ch / BI) * BO * BI + (o % BO) * BI + ch % BI];
      const int64_t i = ((n / B) * OB + o / BO) * B * BO + (n % B) * BO + o % BO;
      // One row block of bias, shared by every row block.
      out[i] = requant(acc + bias[(o / BO) * B * BO + (n % B) * BO + o % BO], o, p.requant);
    }
  return out;
}

// The graph executor's qadd (the quantize family, compiler/ops/quantize/def.cc), elementwise.
std::vector<int64_t> add_reference(const AddParams &p, const std::vector<int64_t> &a,
                                   const std::vector<int64_t> &b) {
  const int64_t round = p.rshift > 0 ? int64_t{1} << (p.rshift - 1) : 0;
  std::vector<int64_t> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t v = wrap32(shr(a[i], -p.lshift_a) + shr(b[i], -p.lshift_b) + round);
    out[i] = static_cast<int8_t>(std::min(std::max(shr(v, p.rshift), p.lo(8)), p.hi(8)));
  }
  return out;
}

class OnConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(OnConfig, ConvPerChannelShiftsAndClipBounds) {
  isa::HwConfig c = test::config_named(GetParam());
  std::mt19937 rng(99);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int resident_runs = 0, tail_runs = 0;
  for (int i = 0; i < 3; ++i) {
    lower::Conv2dParams p;
    p.batch = c.batch;
    p.kernel_h = p.kernel_w = i == 1 ? 1 : 3;
    p.pad_h = p.pad_w = p.kernel_h / 2;
    p.stride_h = p.stride_w = i == 2 ? 2 : 1;
    p.height = pick(4, 9);
    p.width = pick(4, 9);
    p.in_channels = c.block_in * pick(1, 2);
    p.out_channels = c.block_out * 2;
    for (int64_t o = 0; o < p.out_channels; ++o) p.requant.channel_shifts.push_back(pick(3, 12));
    if (i != 1) {
      p.requant.clip_min = pick(-100, 0);
      p.requant.clip_max = pick(1, 100);
    }
    p.requant.relu = i == 1;
    // Two threads also with each resident operand (the loop-order knob), and with tail tiles,
    // where they fit.
    for (const test::Order &order : test::with_resident_orders()) {
      const int vt = order.vthreads;
      const auto resident = order.resident;
      SCOPED_TRACE(fmt::format("case {} vthreads {} resident {} tails {}", i, vt,
                               static_cast<int>(resident), order.tails));
      LowerOptions o;
      if (!test::use_order(c, p, order, &o)) continue;  // the operand does not fit
      resident_runs += resident != AccelSchedule::Resident::kNone;
      tail_runs += order.tails;
      LoweredLayer layer = lower::compile_conv2d(c, p, o);
      ASSERT_EQ(layer.op.args.size(), 5u);
      std::vector<std::vector<int64_t>> args;
      args.push_back(test::random_values(layer.op.args[0]->buffer->elems(), -128, 127, 3 + i));
      args.push_back(test::random_values(layer.op.args[1]->buffer->elems(), -128, 127, 4 + i));
      args.push_back(test::random_values(layer.op.args[2]->buffer->elems(), -3000, 3000, 5 + i));
      args.push_back(lower::pack_bias(c, p.batch, p.out_channels, p.requant.channel_shifts));
      args.emplace_back(layer.op.args[4]->buffer->elems(), test::kPoison);
      test::check_layer(c, layer, args, conv_reference(c, p, args[0], args[1], args[2]));
    }
  }
  EXPECT_GT(resident_runs, 0) << "no resident operand fitted: the loop order went untested";
  EXPECT_GT(tail_runs, 0) << "no tile took a tail: tails went untested";
}

TEST_P(OnConfig, DensePerChannelShiftsAndClipBounds) {
  isa::HwConfig c = test::config_named(GetParam());
  lower::DenseParams p;
  p.batch = 2 * c.batch;
  p.in_features = 3 * c.block_in;
  p.out_features = 2 * c.block_out;
  for (int64_t o = 0; o < p.out_features; ++o) p.requant.channel_shifts.push_back(4 + o % 7);
  p.requant.clip_min = -20;
  p.requant.clip_max = 90;
  for (int vt : {1, 2}) {
    LowerOptions o;
    o.vthreads = vt;
    LoweredLayer layer = lower::compile_dense(c, p, o);
    std::vector<std::vector<int64_t>> args;
    args.push_back(test::random_values(layer.op.args[0]->buffer->elems(), -128, 127, 21));
    args.push_back(test::random_values(layer.op.args[1]->buffer->elems(), -128, 127, 22));
    args.push_back(test::random_values(layer.op.args[2]->buffer->elems(), -3000, 3000, 23));
    args.push_back(lower::pack_bias(c, c.batch, p.out_features, p.requant.channel_shifts));
    args.emplace_back(layer.op.args[4]->buffer->elems(), test::kPoison);
    test::check_layer(c, layer, args, dense_reference(c, p, args[0], args[1], args[2]));
  }
}

TEST_P(OnConfig, ResidualAddMatchesGraphSemantics) {
  isa::HwConfig c = test::config_named(GetParam());
  struct Case {
    int la, lb, rs;
    bool relu;
    std::optional<int64_t> lo, hi;
  };
  const std::vector<Case> cases = {
      {0, 0, 0, false, {}, {}}, {2, 0, 1, true, {}, {}}, {0, 3, 2, false, {}, {}},
      {9, 0, 4, false, {}, {}}, {0, 7, 0, true, {}, {}}, {1, 1, 3, false, -50, 60},
  };
  std::mt19937 rng(5);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int tail_runs = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    AddParams p;
    p.batch = c.batch * pick(1, 2);
    p.channels = c.block_out * pick(1, 4);
    p.height = pick(1, 9);
    p.width = pick(1, 9);
    p.lshift_a = cases[i].la;
    p.lshift_b = cases[i].lb;
    p.rshift = cases[i].rs;
    p.relu = cases[i].relu;
    p.clip_min = cases[i].lo;
    p.clip_max = cases[i].hi;
    // One and two threads, then two threads with tail tiles where they fit.
    for (int run = 0; run < 3; ++run) {
      const int vt = run == 0 ? 1 : 2;
      SCOPED_TRACE(fmt::format("case {} n={} c={} {}x{} vthreads {} tails {}", i, p.batch,
                               p.channels, p.height, p.width, vt, run == 2));
      LowerOptions o;
      o.vthreads = vt;
      if (run == 2) {
        if (!test::use_tails(c, lower::Layer{"add", p}, vt, &o)) continue;
        ++tail_runs;
      }
      LoweredLayer layer = lower::compile_add(c, p, o);
      const size_t n = layer.op.args[0]->buffer->elems();
      auto a = test::random_values(n, -128, 127, 40 + i);
      auto b = test::random_values(n, -128, 127, 50 + i);
      std::vector<std::vector<int64_t>> args = {a, b, lower::add_weight(c, p),
                                                std::vector<int64_t>(n, test::kPoison)};
      test::check_layer(c, layer, args, add_reference(p, a, b));
    }
  }
  EXPECT_GT(tail_runs, 0) << "no tile took a tail: tails went untested";
}

TEST_P(OnConfig, ConvWithFusedResidualEqualsConvThenAdd) {
  isa::HwConfig c = test::config_named(GetParam());
  struct Case {
    int k, stride, la, lb, rs;
    int64_t lo, hi;
    bool per_channel;
  };
  const std::vector<Case> cases = {
      {3, 1, 1, 0, 1, 0, 127, false},    // ResNet's: ReLU after the add
      {3, 1, 0, 9, 4, -128, 127, true},  // the skip's shift beyond the weight's 2^6
      {1, 2, 3, 2, 5, -40, 70, false},   // a strided 1x1 (downsample) producer
  };
  std::mt19937 rng(17);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int resident_runs = 0, tail_runs = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case &k = cases[i];
    lower::Conv2dParams p;
    p.batch = c.batch;
    p.kernel_h = p.kernel_w = k.k;
    p.pad_h = p.pad_w = k.k / 2;
    p.stride_h = p.stride_w = k.stride;
    p.height = pick(4, 9);
    p.width = pick(4, 9);
    p.in_channels = c.block_in * pick(1, 2);
    p.out_channels = c.block_out * 2;
    p.requant.shift = 7;
    if (k.per_channel)
      for (int64_t o = 0; o < p.out_channels; ++o) p.requant.channel_shifts.push_back(pick(3, 12));
    p.requant.relu = false;
    lower::Residual r;
    r.lshift_out = k.la;
    r.lshift_skip = k.lb;
    r.rshift = k.rs;
    r.clip_min = k.lo;
    r.clip_max = k.hi;
    p.residual = r;
    if (c.block_in != c.block_out) {
      EXPECT_ERROR(lower::compile_conv2d(c, p, LowerOptions{}), "gemm.block_in");
      return;
    }
    // Two threads also with each resident operand (the loop-order knob), and with tail tiles,
    // where they fit.
    for (const test::Order &order : test::with_resident_orders()) {
      const int vt = order.vthreads;
      const auto resident = order.resident;
      SCOPED_TRACE(fmt::format("case {} vthreads {} resident {} tails {}", i, vt,
                               static_cast<int>(resident), order.tails));
      LowerOptions o;
      if (!test::use_order(c, p, order, &o)) continue;  // the operand does not fit
      resident_runs += resident != AccelSchedule::Resident::kNone;
      tail_runs += order.tails;
      LoweredLayer layer = lower::compile_conv2d(c, p, o);
      const size_t nargs = layer.op.args.size();
      ASSERT_EQ(nargs, k.per_channel ? 7u : 6u);
      std::vector<std::vector<int64_t>> args;
      args.push_back(test::random_values(layer.op.args[0]->buffer->elems(), -128, 127, 60 + i));
      args.push_back(test::random_values(layer.op.args[1]->buffer->elems(), -128, 127, 70 + i));
      args.push_back(test::random_values(layer.op.args[2]->buffer->elems(), -3000, 3000, 80 + i));
      if (k.per_channel)
        args.push_back(lower::pack_bias(c, p.batch, p.out_channels, p.requant.channel_shifts));
      const auto skip =
          test::random_values(layer.op.args[nargs - 3]->buffer->elems(), -128, 127, 90 + i);
      args.push_back(skip);
      args.push_back(lower::residual_weight(c, r));
      args.emplace_back(layer.op.args[nargs - 1]->buffer->elems(), test::kPoison);
      lower::Conv2dParams plain = p;
      plain.residual.reset();
      const auto y = conv_reference(c, plain, args[0], args[1], args[2]);
      AddParams add;
      add.lshift_a = k.la;
      add.lshift_b = k.lb;
      add.rshift = k.rs;
      add.clip_min = k.lo;
      add.clip_max = k.hi;
      test::check_layer(c, layer, args, add_reference(add, y, skip));
    }
  }
  EXPECT_GT(resident_runs, 0) << "no resident operand fitted: the loop order went untested";
  EXPECT_GT(tail_runs, 0) << "no tile took a tail: tails went untested";
}

// batch4: not bundled, with the CLIP and GEMM assign extensions (its RTL model built on
// demand).
INSTANTIATE_TEST_SUITE_P(Configs, OnConfig,
                         ::testing::Values("default", "small", "wide", "batch4"));

// ResNet's block conv2 with its residual add fused, two threads: the compute engine's stream
// ordered for its in-order dispatch (order_compute_dispatch) computes the same and keeps the
// GEMM core busy beside the residual's ALU chain: fewer cycles than the stream as staggered.
TEST(FusedResidual, DispatchOrderKeepsTheGemmCoreBusy) {
  const isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p;
  p.height = p.width = 28;
  p.in_channels = p.out_channels = 64;
  p.kernel_h = p.kernel_w = 3;
  p.pad_h = p.pad_w = 1;
  p.requant.shift = 9;
  p.requant.relu = false;
  lower::Residual r;
  r.lshift_out = 1;
  r.rshift = 1;
  r.clip_min = 0;
  r.clip_max = 127;
  p.residual = r;
  LowerOptions o;
  o.vthreads = 2;
  const LoweredLayer ordered = lower::compile_conv2d(c, p, o);
  o.commands.order_dispatch = false;
  const LoweredLayer staggered = lower::compile_conv2d(c, p, o);
  ASSERT_EQ(ordered.schedule.vthreads, 2);
  std::vector<std::vector<int64_t>> args;
  args.push_back(test::random_values(ordered.op.args[0]->buffer->elems(), -128, 127, 5));
  args.push_back(test::random_values(ordered.op.args[1]->buffer->elems(), -128, 127, 6));
  args.push_back(test::random_values(ordered.op.args[2]->buffer->elems(), -3000, 3000, 7));
  const auto skip = test::random_values(ordered.op.args[3]->buffer->elems(), -128, 127, 8);
  args.push_back(skip);
  args.push_back(lower::residual_weight(c, r));
  args.emplace_back(ordered.op.args[5]->buffer->elems(), test::kPoison);
  lower::Conv2dParams plain = p;
  plain.residual.reset();
  AddParams add;
  add.lshift_a = r.lshift_out;
  add.rshift = r.rshift;
  add.clip_min = r.clip_min;
  add.clip_max = r.clip_max;
  const auto want = add_reference(add, conv_reference(c, plain, args[0], args[1], args[2]), skip);
  test::check_layer(c, ordered, args, want, 0.02);
  test::check_layer(c, staggered, args, want, 0.02);
  const uint64_t with = test::run_layer("perf", c, ordered, args).counters.at("cycles");
  const uint64_t without = test::run_layer("perf", c, staggered, args).counters.at("cycles");
  EXPECT_LT(with * 100, without * 97) << with << " cycles ordered, " << without << " staggered";
}

TEST(RequantErrors, WrongShiftCountAndBadBoundsAreDiagnosed) {
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p;
  p.requant.channel_shifts = {1, 2, 3};
  try {
    lower::compile_conv2d(c, p, {}, "convX");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("convX: 3 per-channel shifts for 16 output channels"),
              std::string::npos)
        << e.what();
  }
  lower::DenseParams d;
  d.requant.clip_min = 10;
  d.requant.clip_max = 5;
  EXPECT_ERROR(lower::compile_dense(c, d, {}, "fc"), "fc: clip_min = 10 is above clip_max = 5");
  AddParams a;
  a.rshift = 17;
  try {
    lower::compile_add(c, a, {}, "addX");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("addX: rshift = 17"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vacc
