// Pooling on the accelerator (PoolParams: MaxPool and vacc.QAveragePool over int8 NCHWnc
// tiles), each case compared with a plain C++ reference of the ONNX window semantics (a max over
// the window's positions inside the input; an average whose count follows count_include_pad),
// with the integer arithmetic of graph/qpool.h, and with the loop-IR interpreter, on every test
// engine, for the default, small and wide configs and 1 and 2 virtual threads.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "../expect_error.h"
#include "layer_check.h"
#include "layer_kit.h"
#include "program_kit.h"
#include "reference.h"
#include "vacc/graph/qpool.h"
#include "vacc/lower/lower.h"
#include "vacc/support/error.h"

namespace vacc {
namespace {

using lower::AccelSchedule;
using lower::LoweredLayer;
using lower::LowerOptions;
using lower::PoolParams;

// ONNX's output extent along one axis (ceil_mode: a last window that would start in the end
// padding is dropped, as PyTorch and ONNX Runtime do).
int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe, bool ceil) {
  const int64_t span = in + pb + pe - k;
  int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (o - 1) * s >= in + pb) --o;
  return o;
}

struct Case {
  PoolParams::Kind kind;
  int64_t k, s, pad;  // square window, stride, symmetric explicit padding
  bool ceil, include_pad, signed_input;
  int rshift_extra;  // average: rshift = scale_bits + extra (past 15: the split rounding)
};

PoolParams params_of(const isa::HwConfig &c, const Case &k, int64_t h, int64_t w, int64_t cb) {
  PoolParams p;
  p.kind = k.kind;
  p.batch = c.batch;
  p.channels = c.block_out * cb;
  p.height = h;
  p.width = w;
  p.kernel_h = p.kernel_w = k.k;
  p.stride_h = p.stride_w = k.s;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = k.pad;
  p.out_height = out_extent(h, k.k, k.s, k.pad, k.pad, k.ceil);
  p.out_width = out_extent(w, k.k, k.s, k.pad, k.pad, k.ceil);
  p.input_nonnegative = !k.signed_input;
  p.count_include_pad = k.include_pad;
  // The quantizer's choice for the smallest window (graph/passes/quantize.cc).
  int64_t n_min = k.k * k.k;
  for (int64_t oh = 0; oh < p.out_height; ++oh)
    for (int64_t ow = 0; ow < p.out_width; ++ow) {
      const int64_t lo = k.include_pad ? -k.pad : 0;
      const int64_t n =
          graph::qpool_axis_count(oh, k.s, k.k, k.pad, lo, h + (k.include_pad ? k.pad : 0)) *
          graph::qpool_axis_count(ow, k.s, k.k, k.pad, lo, w + (k.include_pad ? k.pad : 0));
      if (n > 0) n_min = std::min(n_min, n);
    }
  p.scale_bits = graph::qpool_scale_bits(n_min);
  p.rshift = std::max(1, p.scale_bits + k.rshift_extra);
  p.clip_min = k.signed_input ? -100 : -128;
  p.clip_max = 120;
  return p;
}

// The blocked [N/B, C/BO, H, W, B, BO] element of (n, ch, y, x).
int64_t at(const isa::HwConfig &c, int64_t channels, int64_t h, int64_t w, int64_t n, int64_t ch,
           int64_t y, int64_t x) {
  const int64_t B = c.batch, BO = c.block_out, CB = channels / BO;
  return ((((n / B) * CB + ch / BO) * h + y) * w + x) * B * BO + (n % B) * BO + ch % BO;
}

std::vector<int64_t> pool_reference(const isa::HwConfig &c, const PoolParams &p,
                                    const std::vector<int64_t> &data) {
  std::vector<int64_t> out(p.batch * p.channels * p.out_height * p.out_width);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t ch = 0; ch < p.channels; ++ch)
      for (int64_t oh = 0; oh < p.out_height; ++oh)
        for (int64_t ow = 0; ow < p.out_width; ++ow) {
          int64_t best = INT64_MIN, sum = 0, valid = 0, counted = 0;
          for (int64_t kh = 0; kh < p.kernel_h; ++kh)
            for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
              const int64_t y = oh * p.stride_h + kh - p.pad_top;
              const int64_t x = ow * p.stride_w + kw - p.pad_left;
              const bool inside = y >= 0 && y < p.height && x >= 0 && x < p.width;
              const bool in_pads = y >= -p.pad_top && y < p.height + p.pad_bottom &&
                                   x >= -p.pad_left && x < p.width + p.pad_right;
              counted += p.count_include_pad ? in_pads : inside;
              if (!inside) continue;
              const int64_t v = data[at(c, p.channels, p.height, p.width, n, ch, y, x)];
              best = std::max(best, v);
              sum += v;
              ++valid;
            }
          EXPECT_GT(valid, 0) << "a window without input";
          const int64_t m = graph::qpool_multiplier(counted, p.scale_bits);
          out[at(c, p.channels, p.out_height, p.out_width, n, ch, oh, ow)] =
              p.kind == PoolParams::Kind::kMax
                  ? best
                  : graph::qpool_output(sum, m, p.rshift, p.clip_min, p.clip_max);
        }
  return out;
}

class OnConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(OnConfig, PoolsMatchTheOnnxWindowsAndTheIntegerAverage) {
  const isa::HwConfig c = test::config_named(GetParam());
  using K = PoolParams::Kind;
  const std::vector<Case> cases = {
      {K::kMax, 3, 2, 1, false, false, false, 0},  // ResNet's stem pool, after a ReLU
      {K::kMax, 2, 2, 0, false, false, true, 0},   // unpadded: any sign
      {K::kMax, 3, 2, 0, true, false, false, 0},   // ceil_mode's overhang (GoogLeNet)
      {K::kMax, 3, 1, 1, false, false, false, 0},
      {K::kAverage, 0, 1, 0, false, false, true, 3},  // global (k = the input), rshift <= 15
      {K::kAverage, 3, 1, 1, false, true, true, 2},   // counting the padding: one multiplier
      {K::kAverage, 3, 2, 1, false, false, true, 1},  // not counting it: one per window
      {K::kAverage, 2, 2, 0, true, true, false, -2},  // ceil_mode: overhang never counts
  };
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int tail_runs = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    Case k = cases[i];
    int64_t h = pick(5, 11), w = pick(5, 11);
    if (k.k == 0) {  // global
      k.k = h = w = pick(3, 7);
    }
    const PoolParams p = params_of(c, k, h, w, pick(1, 3) * (c.name == "small" ? 2 : 1));
    // One and two threads, then two threads with tail tiles (sizes that do not divide the
    // rows, columns or channel blocks) where they fit.
    for (int run = 0; run < 3; ++run) {
      const int vt = run == 0 ? 1 : 2;
      SCOPED_TRACE(fmt::format("case {} {}x{} k{} s{} p{} ceil {} vthreads {} rshift {} tails {}",
                               i, h, w, k.k, k.s, k.pad, k.ceil, vt, p.rshift, run == 2));
      LowerOptions o;
      o.vthreads = vt;
      if (run == 2) {
        if (!test::use_tails(c, lower::Layer{"pool", p}, vt, &o)) continue;
        ++tail_runs;
      }
      const LoweredLayer layer = lower::lower(c, lower::Layer{"pool", p}, o);
      const size_t nargs = layer.op.args.size();
      ASSERT_EQ(nargs, lower::pool_counts_vary(p) ? 4u : 3u);
      std::vector<std::vector<int64_t>> args;
      args.push_back(test::random_values(layer.op.args[0]->buffer->elems(),
                                         k.signed_input ? -128 : 0, 127, 30 + i));
      args.push_back(lower::pool_weight(c));
      if (nargs == 4) args.push_back(lower::pool_multipliers(c, p));
      args.emplace_back(layer.op.args[nargs - 1]->buffer->elems(), test::kPoison);
      test::check_layer(c, layer, args, pool_reference(c, p, args[0]), 0.02);
    }
  }
  EXPECT_GT(tail_runs, 0) << "no tile took a tail: tails went untested";
}

// A max pool fused after a convolution (the max of the accumulators, then the requantization)
// equals the convolution's requantized output pooled: the requantization is monotone.
TEST_P(OnConfig, ConvWithFusedMaxPoolEqualsConvThenPool) {
  const isa::HwConfig c = test::config_named(GetParam());
  struct FusedCase {
    int64_t k, pad, pool_k, pool_s;
    bool relu;
  };
  const std::vector<FusedCase> cases = {
      {1, 0, 3, 2, true},   // a folded stem's 1x1 over its grown grid, ResNet's pool
      {3, 1, 2, 2, false},  // VGG's
      {3, 1, 3, 1, true},
  };
  std::mt19937 rng(23);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int resident_runs = 0, tail_runs = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const FusedCase &k = cases[i];
    lower::Conv2dParams p;
    p.batch = c.batch;
    p.in_channels = c.block_in * pick(1, 2);
    p.out_channels = c.block_out * 2;
    p.height = pick(7, 11);
    p.width = pick(7, 11);
    p.kernel_h = p.kernel_w = k.k;
    p.pad_h = p.pad_w = k.pad;
    p.requant.shift = 6;
    p.requant.relu = k.relu;
    p.pool = lower::PoolEpilogue{k.pool_k, k.pool_k, k.pool_s, k.pool_s};
    // Two threads also with each resident operand (the loop-order knob), and with tail tiles,
    // where they fit.
    for (const test::Order &order : test::with_resident_orders()) {
      const int vt = order.vthreads;
      const auto resident = order.resident;
      SCOPED_TRACE(fmt::format("case {} {}x{} vthreads {} resident {} tails {}", i, p.height, p.width, vt,
                               static_cast<int>(resident), order.tails));
      LowerOptions o;
      if (!test::use_order(c, p, order, &o)) continue;  // the operand does not fit
      resident_runs += resident != AccelSchedule::Resident::kNone;
      tail_runs += order.tails;
      const LoweredLayer layer = lower::compile_conv2d(c, p, o);
      std::vector<std::vector<int64_t>> args;
      args.push_back(test::random_values(layer.op.args[0]->buffer->elems(), -128, 127, 80 + i));
      args.push_back(test::random_values(layer.op.args[1]->buffer->elems(), -128, 127, 81 + i));
      args.push_back(test::random_values(layer.op.args[2]->buffer->elems(), -3000, 3000, 82 + i));
      args.emplace_back(layer.op.args[3]->buffer->elems(), test::kPoison);
      lower::Conv2dParams plain = p;
      plain.pool.reset();
      const std::vector<int64_t> y = test::conv2d_reference(c, plain, args[0], args[1], args[2]);
      const int64_t OH = p.out_height(), OW = p.out_width();
      const int64_t PH = p.result_height(), PW = p.result_width();
      std::vector<int64_t> want(args[3].size());
      for (int64_t n = 0; n < p.batch; ++n)
        for (int64_t ch = 0; ch < p.out_channels; ++ch)
          for (int64_t oh = 0; oh < PH; ++oh)
            for (int64_t ow = 0; ow < PW; ++ow) {
              int64_t best = INT64_MIN;
              for (int64_t kh = 0; kh < k.pool_k; ++kh)
                for (int64_t kw = 0; kw < k.pool_k; ++kw)
                  best = std::max(best, y[at(c, p.out_channels, OH, OW, n, ch, oh * k.pool_s + kh,
                                             ow * k.pool_s + kw)]);
              want[at(c, p.out_channels, PH, PW, n, ch, oh, ow)] = best;
            }
      test::check_layer(c, layer, args, want, 0.02);
      // Two threads: every GEMM and ALU stays in its thread's ACC bank and carries the overlap
      // flag (merge_kernels once merged both threads' pool resets into one unflagged ALU).
      if (layer.schedule.vthreads == 2)
        for (const auto &cmd : layer.commands.commands) {
          if (const auto *g = std::get_if<isa::GemmCommand>(&cmd)) {
            EXPECT_TRUE(g->overlap);
          }
          if (const auto *a = std::get_if<isa::AluCommand>(&cmd)) {
            EXPECT_TRUE(a->overlap);
          }
        }
    }
  }
  EXPECT_GT(resident_runs, 0) << "no resident operand fitted: the loop order went untested";
  EXPECT_GT(tail_runs, 0) << "no tile took a tail: tails went untested";
}

// batch4: not bundled, with the CLIP and GEMM assign extensions (its RTL model built on
// demand).
INSTANTIATE_TEST_SUITE_P(Configs, OnConfig,
                         ::testing::Values("default", "small", "wide", "batch4"));

TEST(PoolErrors, EachDiagnosticNamesTheLayerAndTheRule) {
  const isa::HwConfig c = test::config_named("default");
  PoolParams p;
  p.kernel_h = p.kernel_w = 3;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  p.stride_h = p.stride_w = 2;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"mp", p}), "mp: a padded max pool reads the DMA's");
  p.input_nonnegative = true;
  p.pad_top = 16;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"mp", p}),
               "mp: padding above = 16 exceeds the DMA's padding limit of 15");
  p.pad_top = -1;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"mp", p}),
               "mp: padding above = -1 must not be negative");
  p.pad_top = 1;
  p.pad_bottom = -1;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"mp", p}),
               "mp: the explicit padding must not be negative");
  p.pad_bottom = 1;
  p.stride_w = 0;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"mp", p}), "mp: stride_w = 0 must be positive");
  p.stride_w = 2;
  p.pad_top = 1;
  p.channels = 24;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"mp", p}),
               "mp: channels = 24 is not a multiple of gemm.block_out = 16");
  p.channels = 16;
  p.out_height = 9;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"mp", p}),
               "mp: the last 9x4 output's window starts past the input");
  p.out_height = 4;
  p.kind = PoolParams::Kind::kAverage;
  p.scale_bits = 23;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"ap", p}), "does not fit the ALU's 16-bit immediate");
  p.scale_bits = 24;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"ap", p}), "ap: scale_bits = 24 must lie in [0, 23]");
  p.scale_bits = 10;
  p.clip_min = 10;
  p.clip_max = 9;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"ap", p}), "ap: clip bounds [10, 9] must be an int8");
  p.clip_min = -128;
  p.clip_max = 127;
  p.scale_bits = 10;
  p.rshift = 0;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"ap", p}), "ap: rshift = 0 must lie in [1, 30]");
  p.rshift = 10;
  isa::HwConfig narrow = c;
  narrow.block_in = 8;
  EXPECT_ERROR(lower::lower(narrow, lower::Layer{"ap", p}),
               "ap: a pool moves int8 tiles into the accumulators through the GEMM core with an "
               "identity weight, which needs gemm.block_in (8) == gemm.block_out (16)");
  p.kernel_h = p.kernel_w = 50;  // 2 500 input tiles for one output: the INP holds 2 048
  p.height = p.width = 50;
  p.out_height = p.out_width = 1;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 0;
  EXPECT_ERROR(lower::lower(c, lower::Layer{"ap", p}), "ap: no tile fits");

  // A max pool fused into a convolution (PoolEpilogue).
  lower::Conv2dParams conv;
  conv.pool = lower::PoolEpilogue{3, 3, 0, 2};
  EXPECT_ERROR(lower::compile_conv2d(c, conv, {}, "cp"), "cp: pool stride_h = 0 must be positive");
  conv.pool = lower::PoolEpilogue{9, 3, 2, 2};
  EXPECT_ERROR(lower::compile_conv2d(c, conv, {}, "cp"),
               "cp: the 9x3 pool window is larger than the 8x8 convolution output");
  conv.pool = lower::PoolEpilogue{3, 3, 2, 2};
  conv.residual = lower::Residual{};
  EXPECT_ERROR(lower::compile_conv2d(c, conv, {}, "cp"),
               "cp: a fused max pool and a fused residual add in one convolution");
}

}  // namespace
}  // namespace vacc
