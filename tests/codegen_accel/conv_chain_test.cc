// Conv chains (ConvChainParams, depth-first execution of a convolution and the 1x1 convolution
// that reads its result): the compiled chain keeps the intermediate in INP (STORE INP, nothing
// of it in DRAM) and gives the C++ reference's result (the two convolutions one after the
// other) on fsim, perf and rtl, over chain shapes (3x3, strided, depthwise first), schedules
// (the default, threads over the rows, several kept blocks per tile and per weight load) and
// configs (small and wide with extensions.store_inp, batch4 whose RTL model builds on demand).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "layer_kit.h"
#include "program_kit.h"
#include "reference.h"
#include "vacc/lower/layer_json.h"
#include "vacc/lower/lower.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/support/error.h"

namespace vacc {
namespace {

isa::HwConfig with_store_inp(const std::string &name) {
  isa::HwConfig c = test::config_named(name);
  c.store_inp = true;
  return c;
}

struct Chain {
  std::string name;
  lower::ConvChainParams p;
};

// A first convolution of `in_blocks` input and `mid_blocks` output channel blocks, then a 1x1
// convolution to `out_blocks`.
lower::ConvChainParams chain(const isa::HwConfig &c, int64_t in_blocks, int64_t mid_blocks,
                             int64_t out_blocks, int64_t k, int64_t stride, int64_t groups,
                             int64_t hw, int64_t batch_blocks = 1) {
  lower::ConvChainParams p;
  lower::Conv2dParams &a = p.first;
  a.batch = batch_blocks * c.batch;
  a.in_channels = in_blocks * c.block_in;
  a.out_channels = mid_blocks * c.block_out;
  a.height = a.width = hw;
  a.kernel_h = a.kernel_w = k;
  a.stride_h = a.stride_w = stride;
  a.pad_h = a.pad_w = k / 2;
  a.groups = groups;
  a.requant = {7, true};
  lower::Conv2dParams &b = p.second;
  b.batch = a.batch;
  b.in_channels = a.out_channels;
  b.out_channels = out_blocks * c.block_out;
  b.height = a.out_height();
  b.width = a.out_width();
  b.kernel_h = b.kernel_w = 1;
  b.pad_h = b.pad_w = 0;
  b.requant = {8, false};
  return p;
}

// `p` with a residual add fused into its second convolution.
lower::ConvChainParams with_residual(lower::ConvChainParams p) {
  lower::Residual r;
  r.lshift_out = 1;
  r.lshift_skip = 0;
  r.rshift = 1;
  r.clip_min = -100;
  r.clip_max = 110;
  p.second.residual = r;
  return p;
}

std::vector<Chain> chains(const isa::HwConfig &c) {
  return {{"3x3 then 1x1", chain(c, 2, 3, 2, 3, 1, 1, 6)},
          {"3x3 stride 2 then 1x1", chain(c, 1, 2, 3, 3, 2, 1, 9)},
          {"depthwise then 1x1 (MobileNetV2's dw -> project)", chain(c, 4, 4, 2, 3, 1, 4, 5)},
          {"1x1 then 1x1, two batch blocks", chain(c, 3, 2, 2, 1, 1, 1, 4, 2)},
          {"3x3 then 1x1 with a residual add (ResNet-50's bottleneck)",
           with_residual(chain(c, 2, 2, 3, 3, 1, 1, 6))},
          {"depthwise then 1x1 with a residual add (MobileNetV2's block)",
           with_residual(chain(c, 4, 4, 2, 3, 1, 4, 5))}};
}

// Random arguments: int8 data, weights and skip, biases in [-2000, 2000], a residual's identity
// weight, the output poisoned.
std::vector<std::vector<int64_t>> chain_args(const isa::HwConfig &c,
                                             const lower::ConvChainParams &p,
                                             const lower::Operator &op, uint32_t seed) {
  std::vector<std::vector<int64_t>> args;
  for (size_t i = 0; i < op.args.size(); ++i) {
    const int64_t n = op.args[i]->buffer->elems();
    const std::string &name = op.args[i]->buffer->name;
    if (i + 1 == op.args.size())
      args.emplace_back(n, test::kPoison);
    else if (name == "skip_weight")
      args.push_back(lower::residual_weight(c, *p.second.residual));
    else if (name.rfind("bias", 0) == 0)
      args.push_back(test::random_values(n, -2000, 2000, seed + i));
    else
      args.push_back(test::random_values(n, -128, 127, seed + i));
  }
  return args;
}

// The two convolutions one after the other (args: data, kernel1, bias1, kernel2, bias2[, skip,
// skip_weight], out), the second's residual add as vacc.QAdd computes it.
std::vector<int64_t> chain_reference(const isa::HwConfig &c, const lower::ConvChainParams &p,
                                     const std::vector<std::vector<int64_t>> &args) {
  const std::vector<int64_t> mid = test::conv2d_reference(c, p.first, args[0], args[1], args[2]);
  lower::Conv2dParams second = p.second;
  second.residual.reset();
  std::vector<int64_t> y = test::conv2d_reference(c, second, mid, args[3], args[4]);
  if (const auto &r = p.second.residual) {
    const std::vector<int64_t> &skip = args[5];
    const int64_t round = r->rshift > 0 ? int64_t{1} << (r->rshift - 1) : 0;
    for (size_t i = 0; i < y.size(); ++i)
      y[i] =
          std::clamp(((y[i] << r->lshift_out) + (skip[i] << r->lshift_skip) + round) >> r->rshift,
                     r->clip_min, r->clip_max);
  }
  return y;
}

size_t count_store_inp(const isa::CommandList &l) {
  size_t n = 0;
  for (const auto &cmd : l.commands)
    if (const auto *d = std::get_if<isa::DmaCommand>(&cmd)) n += d->to_inp();
  return n;
}

// The schedules a chain runs: the default, then (where they fit) threads over the rows, one
// kept block per accumulator tile and per weight load, and all kept blocks at once.
std::vector<lower::AccelSchedule> schedules(const isa::HwConfig &c,
                                            const lower::ConvChainParams &p) {
  const lower::AccelSchedule d = lower::default_schedule(c, p, 2, "chain");
  std::vector<lower::AccelSchedule> out = {d};
  const int64_t MB = p.first.out_channels / c.block_out;
  lower::AccelSchedule rows = d;
  rows.vthreads = 2;
  rows.tile_h = 1;
  lower::AccelSchedule one = d;
  one.mid_oc = one.mid_ic = 1;
  lower::AccelSchedule all = d;
  all.mid_oc = p.first.groups > 1 ? 1 : MB;
  all.mid_ic = MB;
  all.tile_w = 1;
  for (const lower::AccelSchedule &s : {rows, one, all})
    if (!lower::check_schedule(c, p, s)) out.push_back(s);
  return out;
}

class ConvChain : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvChain, KeepsTheIntermediateOnChipAndMatchesTheReference) {
  const isa::HwConfig c = with_store_inp(GetParam());
  const bool rtl = GetParam() == "batch4";
  for (const Chain &ch : chains(c)) {
    for (const lower::AccelSchedule &s : schedules(c, ch.p)) {
      SCOPED_TRACE(fmt::format("{}: {}", ch.name, lower::describe(s)));
      lower::LowerOptions o;
      o.schedule = s;
      const lower::LoweredLayer layer = lower::lower(c, lower::Layer{"chain", ch.p}, o);
      // The intermediate goes through STORE INP only: DRAM sees the output's stores alone.
      EXPECT_GT(count_store_inp(layer.commands), 0u);
      const lower::Conv2dParams &b = ch.p.second;
      EXPECT_EQ(layer.traffic.store_bytes,
                uint64_t(b.batch) * b.out_channels * b.height * b.width * c.out_bits() / 8);
      const auto args = chain_args(c, ch.p, layer.op, 11);
      const std::vector<int64_t> want = chain_reference(c, ch.p, args);
      EXPECT_EQ(test::run_layer("fsim", c, layer, args).out, want);
      const test::LayerRun perf = test::run_layer("perf", c, layer, args);
      EXPECT_EQ(perf.out, want);
      if (rtl) {
        const test::LayerRun r = test::run_layer("rtl", c, layer, args);
        EXPECT_EQ(r.out, want);
        EXPECT_EQ(r.counters.at("cycles"), perf.counters.at("cycles"));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, ConvChain, ::testing::Values("small", "wide", "batch4"));

// The chain's point: no DRAM round trip for the intermediate. Against the two convolutions
// compiled apart, it moves fewer bytes and, on batch4 (64-byte tiles over an 8-byte bus: the
// round trip costs more than the tile's requantization), takes fewer perf cycles, with the same
// result. (On small, 8-byte tiles, the layers are ALU-bound and the chain gains no cycles.)
TEST(ConvChainCost, FewerBytesAndCyclesThanTheTwoLayersApart) {
  const isa::HwConfig c = with_store_inp("batch4");
  const lower::ConvChainParams p = chain(c, 2, 6, 2, 1, 1, 1, 12);
  const lower::LoweredLayer fused = lower::lower(c, lower::Layer{"chain", p}, {});
  const lower::LoweredLayer first = lower::compile_conv2d(c, p.first, {});
  const lower::LoweredLayer second = lower::compile_conv2d(c, p.second, {});
  auto bytes = [](const lower::Traffic &t) { return t.load_bytes + t.store_bytes; };
  EXPECT_LT(bytes(fused.traffic), bytes(first.traffic) + bytes(second.traffic));
  const auto args = chain_args(c, p, fused.op, 5);
  const std::vector<int64_t> want = chain_reference(c, p, args);
  const test::LayerRun chained = test::run_layer("perf", c, fused, args);
  EXPECT_EQ(chained.out, want);
  const test::LayerRun a =
      test::run_layer("perf", c, first,
                      {args[0], args[1], args[2],
                       std::vector<int64_t>(first.op.args[3]->buffer->elems(), test::kPoison)});
  const test::LayerRun b =
      test::run_layer("perf", c, second,
                      {a.out, args[3], args[4], std::vector<int64_t>(want.size(), test::kPoison)});
  EXPECT_EQ(b.out, want);
  EXPECT_LT(chained.counters.at("cycles"), a.counters.at("cycles") + b.counters.at("cycles"));
}

TEST(ConvChainJson, RoundTrips) {
  const isa::HwConfig c = with_store_inp("small");
  const lower::Layer layer{"chain", chain(c, 4, 4, 2, 3, 1, 4, 5)};
  const lower::Layer back = lower::layer_from_json(lower::to_json(layer), "test");
  EXPECT_EQ(lower::workload_key(back), lower::workload_key(layer));
  const lower::AccelSchedule s =
      lower::default_schedule(c, std::get<lower::ConvChainParams>(layer.params), 1, "chain");
  const lower::AccelSchedule t = lower::schedule_from_json(lower::to_json(s), "test");
  EXPECT_EQ(lower::describe(t), lower::describe(s));
  EXPECT_GT(t.mid_oc, 0);
}

// Every schedule the space offers is either refused with a reason or compiles and runs right
// (the tuner's contract), on a small chain.
TEST(ConvChainSpace, EveryAcceptedScheduleRunsRight) {
  const isa::HwConfig c = with_store_inp("small");
  const lower::ConvChainParams p = chain(c, 2, 2, 2, 3, 1, 1, 4);
  const lower::Layer layer{"chain", p};
  const lower::ScheduleSpace space = lower::schedule_space(c, layer);
  size_t ran = 0;
  for (uint64_t i = 0; i < space.size(); ++i) {
    const lower::AccelSchedule s = space.at(i);
    if (lower::check_schedule(c, layer, s)) continue;
    SCOPED_TRACE(lower::describe(s));
    lower::LowerOptions o;
    o.schedule = s;
    const lower::LoweredLayer l = lower::lower(c, layer, o);
    const auto args = chain_args(c, p, l.op, 3);
    EXPECT_EQ(test::run_layer("fsim", c, l, args).out, chain_reference(c, p, args));
    ++ran;
  }
  EXPECT_GT(ran, 10u);
}

using test::error_of;

// One case per diagnostic of the chain's operator and of the STORE INP it compiles to: each
// names the layer and the key, shape or field at fault.
TEST(ConvChainErrors, EachMessageNamesTheCause) {
  const isa::HwConfig c = with_store_inp("small");
  auto message = [&](const isa::HwConfig &config, const lower::ConvChainParams &p) {
    return error_of([&] { lower::lower(config, lower::Layer{"blk", p}, {}); });
  };
  auto expect_has = [](const std::string &msg, const char *want) {
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
  };
  const lower::ConvChainParams ok = chain(c, 2, 3, 2, 3, 1, 1, 6);
  expect_has(message(test::config_named("small"), ok), "extensions.store_inp: true");
  // The loop IR's ACC -> INP copy itself, lowered for a config without the key.
  const lower::Operator op = lower::define(c, ok, lower::default_schedule(c, ok, 1, "blk"), "blk");
  expect_has(error_of([&] { lower::lower_loops(op.func, test::config_named("small")); }),
             "keeping a result on chip needs STORE INP; set extensions.store_inp: true");
  lower::ConvChainParams p = ok;
  p.second.kernel_h = p.second.kernel_w = 3;
  p.second.pad_h = p.second.pad_w = 1;
  expect_has(message(c, p), "blk: the second convolution of a chain is a 1x1 convolution");
  p = ok;
  p.second.in_channels += c.block_in;
  expect_has(message(c, p), "blk: the second convolution reads");
  p = ok;
  p.first.pool = lower::PoolEpilogue{};
  expect_has(message(c, p), "blk: the first convolution of a chain has a fused max pool");
  p = ok;
  p.second.pool = lower::PoolEpilogue{2, 2, 2, 2};
  expect_has(message(c, p), "blk: the second convolution of a chain with a fused max pool");
  p = ok;
  p.second.out_channels = 7;
  expect_has(message(c, p), "blk (second): out_channels = 7 is not a multiple");
  // A kept result of 600 channel blocks does not fit small's INP (512 tiles) even a pixel at a
  // time.
  p = chain(c, 1, 600, 1, 1, 1, 1, 2);
  expect_has(message(c, p), "blk: no tiling of the chain fits");
  // A schedule the rules refuse, given explicitly.
  lower::LowerOptions o;
  o.schedule = lower::default_schedule(c, ok, 1, "blk");
  o.schedule->mid_oc = 2;  // does not divide 3 blocks
  expect_has(error_of([&] {
               lower::lower(c, lower::Layer{"blk", ok}, o);
             }),
             "mid_oc = 2 must divide its extent 3 in a conv chain");
  o.schedule = lower::default_schedule(c, ok, 1, "blk");
  o.schedule->vthread_rows = false;
  expect_has(error_of([&] {
               lower::lower(c, lower::Layer{"blk", ok}, o);
             }),
             "virtual threads split the output rows");
}

// A command list naming the INP scratchpad as a DRAM buffer (or a STORE INP naming a DRAM
// buffer) is refused when read back.
TEST(ConvChainErrors, CommandListWithAMisplacedInpDestinationIsRefused) {
  const isa::HwConfig c = with_store_inp("small");
  const lower::LoweredLayer l =
      lower::lower(c, lower::Layer{"blk", chain(c, 2, 3, 2, 3, 1, 1, 6)}, {});
  isa::CommandList list = l.commands;
  EXPECT_EQ(isa::deserialize(isa::serialize(list)).commands, list.commands);
  for (auto &cmd : list.commands)
    if (auto *d = std::get_if<isa::DmaCommand>(&cmd); d && d->to_inp()) {
      d->buffer = 0;
      break;
    }
  const std::string msg = error_of([&] { isa::deserialize(isa::serialize(list)); });
  EXPECT_NE(msg.find("is a STORE INP (destination: the INP scratchpad) naming a DRAM buffer"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace vacc
