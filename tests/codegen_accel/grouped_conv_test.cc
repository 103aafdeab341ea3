// Grouped and depthwise convolutions on the accelerator (Conv2dParams::groups: slices of whole
// channel blocks, support/block_groups.h): plain NCHW data and the model's grouped weight
// [O, C/groups, KH, KW] packed by the host-side layout functions, run on every test engine and
// through the loop-IR interpreter, and compared with a plain C++ grouped convolution written
// on NCHW, independent of the blocked layouts. Configs default (16x16 blocks), small (8x8) and
// wide (32x32), one and two virtual threads.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "layer_kit.h"
#include "program_kit.h"
#include "reference.h"
#include "vacc/lower/host_layout.h"
#include "vacc/lower/lower.h"
#include "vacc/support/block_groups.h"

namespace vacc {
namespace {

struct GroupedCase {
  const char *what;
  int64_t channels, out_channels, groups, height, width, kernel, stride, pad;
};

// Accumulators (bias included) of the grouped convolution, [N, O, OH, OW].
std::vector<int64_t> grouped_accumulators(const GroupedCase &g, int64_t n,
                                          const std::vector<int64_t> &x,
                                          const std::vector<int64_t> &w,
                                          const std::vector<int64_t> &bias) {
  const int64_t C = g.channels, O = g.out_channels, H = g.height, W = g.width, K = g.kernel;
  const int64_t OH = (H + 2 * g.pad - K) / g.stride + 1, OW = (W + 2 * g.pad - K) / g.stride + 1;
  const int64_t cg = C / g.groups, og = O / g.groups;
  std::vector<int64_t> acc(n * O * OH * OW);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t sum = bias[o];
          for (int64_t i = 0; i < cg; ++i) {
            const int64_t ch = o / og * cg + i;
            for (int64_t kh = 0; kh < K; ++kh)
              for (int64_t kw = 0; kw < K; ++kw) {
                const int64_t h = oh * g.stride + kh - g.pad, x_ = ow * g.stride + kw - g.pad;
                if (h < 0 || h >= H || x_ < 0 || x_ >= W) continue;
                sum += x[((b * C + ch) * H + h) * W + x_] * w[((o * cg + i) * K + kh) * K + kw];
              }
          }
          acc[((b * O + o) * OH + oh) * OW + ow] = sum;
        }
  return acc;
}

// Compiles `g` for `config` with `vthreads`, runs it on every engine and the interpreter, and
// compares with the reference. Returns the layer's schedule for the caller's checks.
lower::AccelSchedule check_grouped(const isa::HwConfig &c, const GroupedCase &g, int vthreads,
                                   uint32_t seed) {
  const int64_t N = c.batch;
  lower::Conv2dParams p;
  p.batch = N;
  p.in_channels = g.channels;
  p.out_channels = g.out_channels;
  p.height = g.height;
  p.width = g.width;
  p.kernel_h = p.kernel_w = g.kernel;
  p.stride_h = p.stride_w = g.stride;
  p.pad_h = p.pad_w = g.pad;
  p = lower::blocked_conv(c, p);
  p.groups = block_groups(g.channels, g.out_channels, g.groups, c.block_in, c.block_out);

  const auto x = test::random_values(N * g.channels * g.height * g.width, -128, 127, seed);
  const auto w = test::random_values(g.out_channels * g.channels / g.groups * g.kernel * g.kernel,
                                     -128, 127, seed + 1);
  const auto bias = test::random_values(g.out_channels, -3000, 3000, seed + 2);
  std::vector<int64_t> acc = grouped_accumulators(g, N, x, w, bias);
  p.requant = {test::fitting_shift(acc, c.inp_bits), seed % 2 == 1};
  std::vector<int64_t> want = acc;
  for (int64_t &v : want) v = test::requant(v, p.requant, c.inp_bits);

  lower::LowerOptions o;
  o.vthreads = vthreads;
  const lower::LoweredLayer layer = lower::compile_conv2d(c, p, o, g.what);
  const int64_t OH = p.out_height(), OW = p.out_width();
  const int64_t out_elems = N * p.out_channels * OH * OW;
  const std::vector<std::vector<int64_t>> args = {
      lower::pack_data(c, N, g.channels, g.height, g.width, x),
      lower::pack_grouped_weight(c, g.out_channels, g.channels, g.groups, g.kernel, g.kernel, w),
      lower::pack_bias(c, N, g.out_channels, bias), std::vector<int64_t>(out_elems, test::kPoison)};
  int64_t macs = 0;
  EXPECT_EQ(lower::unpack_output(c, N, g.out_channels, OH, OW,
                                 test::interpret_layer(c, layer, args, &macs)),
            want)
      << "interpreter vs the C++ reference";
  // The GEMM core runs each output block against the input blocks of its own slice only.
  EXPECT_EQ(macs, N * p.out_channels * OH * OW * p.in_channels / p.groups * g.kernel * g.kernel);
  for (const std::string &engine : test::test_engines()) {
    SCOPED_TRACE("engine " + engine);
    const test::LayerRun run = test::run_layer(engine, c, layer, args);
    const std::vector<int64_t> got = lower::unpack_output(c, N, g.out_channels, OH, OW, run.out);
    size_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i) bad += got[i] != want[i];
    EXPECT_EQ(bad, 0u) << bad << " of " << want.size() << " outputs differ";
    if (run.counters.count("macs")) EXPECT_EQ(run.counters.at("macs"), static_cast<uint64_t>(macs));
  }
  return layer.schedule;
}

const GroupedCase kCases[] = {
    {"depthwise", 32, 32, 32, 10, 9, 3, 1, 1},
    {"depthwise_stride2", 48, 48, 48, 11, 11, 3, 2, 1},
    {"depthwise_24_channels", 24, 24, 24, 7, 8, 3, 1, 1},
    {"depthwise_5x5_stride2", 16, 16, 16, 9, 9, 5, 2, 2},
    {"groups4_8_channels_each", 32, 32, 4, 6, 6, 3, 1, 0},
    {"groups2_32_channels_each", 64, 64, 2, 5, 5, 3, 1, 1},
    {"groups2_24_channels_each", 48, 48, 2, 5, 6, 3, 2, 1},
    {"channel_multiplier2", 16, 32, 16, 6, 6, 3, 2, 1},
    // ResNeXt's shape: 32-channel groups, many of them. Each output block's load must bring
    // its own slice's input blocks only: the whole input (16 blocks of 12x12 tiles) does not
    // fit the input scratchpad beside the tiling the schedule picks for the slice.
    {"groups8_32_channels_each_256", 256, 256, 8, 10, 10, 3, 1, 1},
};

class GroupedConv : public ::testing::TestWithParam<std::string> {};

TEST_P(GroupedConv, MatchesPlainGroupedReferenceOnEveryEngine) {
  const isa::HwConfig c = test::config_named(GetParam());
  uint32_t seed = 100;
  for (const GroupedCase &g : kCases)
    for (int vt : {1, 2}) {
      SCOPED_TRACE(fmt::format("{} vthreads={}", g.what, vt));
      check_grouped(c, g, vt, seed++);
    }
}

INSTANTIATE_TEST_SUITE_P(Configs, GroupedConv, ::testing::Values("default", "small", "wide"));

TEST(GroupedConv, SlicesOfWholeBlocks) {
  // 16-channel blocks: a depthwise layer is one slice per block; groups of 8 channels pair up
  // in a block; 32-channel groups span two blocks; 24-channel groups straddle a block and fall
  // back to one dense slice (zero weights between the groups); a channel multiplier of 2 on one
  // input block reads it from both output blocks.
  EXPECT_EQ(block_groups(96, 96, 96, 16, 16), 6);
  EXPECT_EQ(block_groups(24, 24, 24, 16, 16), 2);
  EXPECT_EQ(block_groups(32, 32, 4, 16, 16), 2);
  EXPECT_EQ(block_groups(64, 64, 2, 16, 16), 2);
  EXPECT_EQ(block_groups(48, 48, 2, 16, 16), 1);
  EXPECT_EQ(block_groups(48, 48, 2, 8, 8), 2);
  EXPECT_EQ(block_groups(16, 32, 16, 16, 16), 1);
  EXPECT_EQ(block_groups(64, 64, 1, 16, 16), 1);
  EXPECT_FALSE(parts_hold_groups(48, 48, 2, 16, 16, 3));
}

TEST(GroupedConv, SeveralOutputBlocksPerSliceTileOneBlockAtATime) {
  // 32-channel groups on 16-channel blocks: each slice has two output blocks, whose first
  // input block is a division of the output block; the default schedule keeps it in the host
  // loops (tile_oc = 1; codegen_accel_errors_test holds the error for a larger one).
  const isa::HwConfig c = test::config_named("default");
  EXPECT_EQ(check_grouped(c, kCases[5], 2, 7).tile_oc, 1);
}

}  // namespace
}  // namespace vacc
