// Accelerator code generation end to end: operators with their default schedules, lowered
// through the pipeline and codegen, run through the runtime on every test engine, for the
// default, small and wide configs with 1 and 2 virtual threads. Each output must equal both
// the loop-IR interpreter's result of the final IR and the plain C++ reference.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <tuple>
#include <set>

#include "layer_kit.h"
#include "program_kit.h"
#include "reference.h"
#include "vacc/lower/lower.h"

namespace vacc {
namespace {

using lower::LoweredLayer;
using lower::LowerOptions;

std::vector<std::vector<int64_t>> random_args(const lower::Operator &op, uint32_t seed) {
  std::vector<std::vector<int64_t>> args;
  for (size_t i = 0; i < op.args.size(); ++i) {
    int64_t n = op.args[i]->buffer->elems();
    if (i == 2) {
      args.push_back(test::random_values(n, -3000, 3000, seed + i));
    } else if (i + 1 == op.args.size()) {
      args.emplace_back(n, test::kPoison);
    } else {
      args.push_back(test::random_values(n, -128, 127, seed + i));
    }
  }
  return args;
}

// Sets the requantization shift from the data random_args(seed) gives the layer (a 1x1-tile
// operator has the same arguments as any schedule's), so that nearly no output clamps.
void fit_shift(const isa::HwConfig &c, lower::Conv2dParams &p, uint32_t seed) {
  auto args = random_args(lower::define(c, p, lower::AccelSchedule{1, 1, 1, 1, 1}), seed);
  p.requant.shift =
      test::fitting_shift(test::conv2d_accumulators(c, p, args[0], args[1], args[2]), c.inp_bits);
}
void fit_shift(const isa::HwConfig &c, lower::DenseParams &p, uint32_t seed) {
  auto args = random_args(lower::define(c, p, lower::AccelSchedule{1, 1, 1, 1, 1}), seed);
  p.requant.shift =
      test::fitting_shift(test::dense_accumulators(c, p, args[0], args[1], args[2]), c.inp_bits);
}

// Runs `layer` on every engine and checks it against the interpreter and `want`.
void check_layer(const isa::HwConfig &c, const LoweredLayer &layer,
                 const std::vector<std::vector<int64_t>> &args, const std::vector<int64_t> &want) {
  int64_t macs = 0;
  std::vector<int64_t> interp = test::interpret_layer(c, layer, args, &macs);
  ASSERT_EQ(interp, want) << "interpreter vs C++ reference";
  for (const std::string &engine : test::test_engines()) {
    SCOPED_TRACE("engine " + engine);
    test::LayerRun run = test::run_layer(engine, c, layer, args);
    size_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i) bad += run.out[i] != want[i];
    EXPECT_EQ(bad, 0u) << bad << " of " << want.size() << " outputs differ";
    if (run.counters.count("macs")) {
      EXPECT_EQ(run.counters.at("macs"), static_cast<uint64_t>(macs));
    }
  }
}

// The rtl engine's cycle count for `layer`, where the rtl engine is among the test engines.
std::optional<uint64_t> rtl_cycles(const isa::HwConfig &c, const LoweredLayer &layer,
                                   const std::vector<std::vector<int64_t>> &args) {
  for (const std::string &engine : test::test_engines())
    if (engine == "rtl") return test::run_layer(engine, c, layer, args).counters.at("cycles");
  return std::nullopt;
}

lower::Conv2dParams random_conv(const isa::HwConfig &c, std::mt19937 &rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  lower::Conv2dParams p;
  p.batch = c.batch * pick(1, 2);
  p.kernel_h = std::vector<int>{1, 3, 5}[pick(0, 2)];
  p.kernel_w = pick(0, 3) == 0 ? std::vector<int>{1, 3}[pick(0, 1)] : p.kernel_h;
  p.stride_h = pick(1, 2);
  p.stride_w = pick(0, 3) == 0 ? 3 - p.stride_h : p.stride_h;
  p.pad_h = pick(0, static_cast<int>(p.kernel_h / 2));
  p.pad_w = pick(0, static_cast<int>(p.kernel_w / 2));
  p.height = pick(static_cast<int>(p.kernel_h), 11);
  p.width = pick(static_cast<int>(p.kernel_w), 11);
  p.in_channels = c.block_in * pick(1, 3);
  p.out_channels = c.block_out * pick(1, 4);
  p.requant = {pick(4, 10), pick(0, 1) == 1};
  return p;
}

class ConvOnConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvOnConfig, RandomShapesOneAndTwoThreadsMatchReference) {
  isa::HwConfig c = test::config_named(GetParam());
  std::mt19937 rng(1234 + GetParam().size());
  for (int i = 0; i < 6; ++i) {
    lower::Conv2dParams p = random_conv(c, rng);
    for (int vt : {1, 2}) {
      SCOPED_TRACE(fmt::format("case {}: n={} {}->{} {}x{} k{}x{} s{}x{} p{}x{} vthreads={}", i,
                               p.batch, p.in_channels, p.out_channels, p.height, p.width,
                               p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w,
                               vt));
      fit_shift(c, p, 77 + i);
      LowerOptions o;
      o.vthreads = vt;
      LoweredLayer layer = lower::compile_conv2d(c, p, o);
      auto args = random_args(layer.op, 77 + i);
      auto want = test::conv2d_reference(c, p, args[0], args[1], args[2]);
      check_layer(c, layer, args, want);
      EXPECT_GT(layer.commands.count_gemm(), 0u);
    }
  }
}

TEST_P(ConvOnConfig, DenseOneAndTwoThreadsMatchReference) {
  isa::HwConfig c = test::config_named(GetParam());
  for (int vt : {1, 2}) {
    lower::DenseParams p;
    p.batch = 3 * c.batch;
    p.in_features = 5 * c.block_in;
    p.out_features = 6 * c.block_out;
    p.requant = {7, vt == 2};
    fit_shift(c, p, 11 * vt);
    LowerOptions o;
    o.vthreads = vt;
    LoweredLayer layer = lower::compile_dense(c, p, o);
    auto args = random_args(layer.op, 11 * vt);
    auto want = test::dense_reference(c, p, args[0], args[1], args[2]);
    SCOPED_TRACE(fmt::format("vthreads={}", vt));
    check_layer(c, layer, args, want);
  }
}

// A dense layer of many rows (a transformer's tokens): tiles of several rows share each weight
// load. One row per tile loaded the weights once per row (64 times here).
TEST_P(ConvOnConfig, DenseOfManyRowsLoadsItsWeightsOncePerRowTile) {
  isa::HwConfig c = test::config_named(GetParam());
  lower::DenseParams p;
  p.batch = 64 * c.batch;
  p.in_features = 4 * c.block_in;
  p.out_features = 8 * c.block_out;
  p.requant = {7, true};
  fit_shift(c, p, 17);
  LowerOptions o;
  o.vthreads = 2;
  LoweredLayer layer = lower::compile_dense(c, p, o);
  EXPECT_GT(layer.schedule.tile_h, 1);
  const uint64_t weight_bytes = uint64_t(p.in_features) * p.out_features * c.wgt_bits / 8;
  const uint64_t input_bytes = uint64_t(p.batch) * p.in_features * c.inp_bits / 8;
  const uint64_t bias_bytes = uint64_t(c.batch) * p.out_features * c.acc_bits / 8;
  EXPECT_LE(layer.traffic.load_bytes, 8 * (weight_bytes + input_bytes + bias_bytes))
      << "schedule rows " << layer.schedule.tile_h << " oc " << layer.schedule.tile_oc;
  auto args = random_args(layer.op, 17);
  check_layer(c, layer, args, test::dense_reference(c, p, args[0], args[1], args[2]));
}

// batch4: not bundled, with the CLIP and GEMM assign extensions (its RTL model built on
// demand).
INSTANTIATE_TEST_SUITE_P(Configs, ConvOnConfig,
                         ::testing::Values("default", "small", "wide", "batch4"));

TEST(CodegenAccel, PartialTilesAndExplicitSchedule) {
  // A 7x7 output with 3x3 tiles: partial tiles at the edges, row-per-row stores.
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p;
  p.height = p.width = 7;
  p.in_channels = 32;
  p.out_channels = 64;
  LowerOptions o;
  o.schedule = lower::AccelSchedule{3, 3, 1, 1, 2};
  fit_shift(c, p, 5);
  LoweredLayer layer = lower::compile_conv2d(c, p, o);
  auto args = random_args(layer.op, 5);
  check_layer(c, layer, args, test::conv2d_reference(c, p, args[0], args[1], args[2]));
}

TEST(CodegenAccel, KernelsAreDeduplicatedAndMerged) {
  // A 3x3 conv: the nine kernel positions (and the input-channel blocks of one tile) become
  // one multi-micro-op GEMM kernel, and every output tile reuses the same kernels. GEMM assign
  // off: it would drop the resets counted here before the unmerged tiles' single-micro-op first
  // GEMMs (gemm_assign_test.cc).
  isa::HwConfig c = test::config_named("default");
  c.gemm_assign = false;
  lower::Conv2dParams p;
  p.height = p.width = 16;
  p.in_channels = 32;
  p.out_channels = 64;
  LowerOptions o;
  o.vthreads = 1;
  o.schedule = lower::AccelSchedule{4, 4, 1, 2, 1};
  fit_shift(c, p, 8);
  LoweredLayer merged = lower::compile_conv2d(c, p, o);
  o.commands.merge_kernels = false;
  LoweredLayer plain = lower::compile_conv2d(c, p, o);
  // Unmerged: one GEMM per (tile, kernel position, ic block); the resets run on the ALU
  // (reset_on_alu), one per tile.
  auto resets = [](const isa::CommandList &l) {
    size_t n = 0;
    for (const auto &cmd : l.commands)
      if (const auto *a = std::get_if<isa::AluCommand>(&cmd))
        n += a->op == isa::AluOp::kMul && a->use_imm && a->imm == 0;
    return n;
  };
  EXPECT_EQ(plain.commands.count_gemm(), 16u * 4 * 9 * 2);
  EXPECT_EQ(merged.commands.count_gemm(), 16u * 4);
  EXPECT_EQ(resets(plain.commands), 16u * 4);
  EXPECT_EQ(resets(merged.commands), 16u * 4);
  size_t largest = 0;
  for (const auto &k : merged.commands.kernels) largest = std::max(largest, k.size());
  EXPECT_EQ(largest, 18u);
  // Distinct kernels: the GEMM and reset kernels and one per ALU stage, shared by all tiles.
  EXPECT_LE(merged.commands.kernels.size(), 8u);
  auto args = random_args(merged.op, 8);
  auto want = test::conv2d_reference(c, p, args[0], args[1], args[2]);
  check_layer(c, merged, args, want);
  check_layer(c, plain, args, want);
}

TEST(CodegenAccel, StoresAreCoalescedIntoRectangles) {
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p;
  p.height = p.width = 8;
  p.in_channels = 16;
  p.out_channels = 16;
  LowerOptions o;
  o.vthreads = 1;
  o.schedule = lower::AccelSchedule{4, 8, 1, 1, 1};
  LoweredLayer layer = lower::compile_conv2d(c, p, o);
  size_t stores = 0;
  for (const auto &cmd : layer.commands.commands) {
    if (const auto *d = std::get_if<isa::DmaCommand>(&cmd); d && d->store) {
      ++stores;
      EXPECT_EQ(d->y * d->x, 32u);
    }
  }
  EXPECT_EQ(stores, 2u);
}

// The overlap flag (isa/README.md, "Overlap"): with two virtual threads each thread's
// accumulators sit in its own ACC bank, the GEMMs and the requantization ALUs stay inside
// one bank and carry the flag, and on the RTL one thread's requantization then runs beside
// the other thread's GEMMs: the same outputs in fewer cycles than without the flags.
TEST(CodegenAccel, TwoThreadsOverlapRequantizationWithGemms) {
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p;
  p.height = p.width = 14;
  p.in_channels = 64;
  p.out_channels = 64;
  LowerOptions o;
  o.vthreads = 2;
  o.schedule = lower::AccelSchedule{7, 14, 1, 2, 2};
  fit_shift(c, p, 21);
  LoweredLayer flagged = lower::compile_conv2d(c, p, o);
  o.commands.overlap = false;
  LoweredLayer plain = lower::compile_conv2d(c, p, o);

  const uint32_t half = static_cast<uint32_t>(c.acc_depth()) / 2;
  size_t gemms = 0, alus = 0;
  std::set<bool> banks_used;
  for (const auto &cmd : flagged.commands.commands) {
    const isa::UopKernel *k = nullptr;
    if (const auto *g = std::get_if<isa::GemmCommand>(&cmd); g && g->overlap) {
      ++gemms;
      k = &flagged.commands.kernels.at(g->kernel);
    }
    if (const auto *a = std::get_if<isa::AluCommand>(&cmd); a && a->overlap) {
      ++alus;
      k = &flagged.commands.kernels.at(a->kernel);
    }
    if (k) banks_used.insert(k->front().dst >= half);
  }
  EXPECT_GT(gemms, 0u);
  EXPECT_GT(alus, 0u);
  EXPECT_EQ(banks_used.size(), 2u) << "the two threads' accumulators share a bank";
  for (const auto &cmd : plain.commands.commands) {
    if (const auto *g = std::get_if<isa::GemmCommand>(&cmd)) {
      EXPECT_FALSE(g->overlap);
    }
    if (const auto *a = std::get_if<isa::AluCommand>(&cmd)) {
      EXPECT_FALSE(a->overlap);
    }
  }

  // fsim checks every flag's promise while it runs; both lists compute the reference.
  auto args = random_args(flagged.op, 21);
  auto want = test::conv2d_reference(c, p, args[0], args[1], args[2]);
  check_layer(c, flagged, args, want);
  check_layer(c, plain, args, want);
  if (const auto with = rtl_cycles(c, flagged, args)) {
    const uint64_t without = rtl_cycles(c, plain, args).value();
    EXPECT_LT(*with * 100, without * 90) << *with << " cycles with overlap, " << without
                                         << " without";
  }
}

// While the pipeline fills, each thread's first GEMMs are split by the weight loads they read
// (one per output-channel block here), so the GEMM core starts after the first load.
TEST(CodegenAccel, FirstGemmsOfEachThreadFollowTheirLoads) {
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p;
  p.height = p.width = 7;
  p.in_channels = 64;
  p.out_channels = 128;
  LowerOptions o;
  o.vthreads = 2;
  o.schedule = lower::AccelSchedule{7, 7, 4, 2, 2};
  fit_shift(c, p, 31);
  LoweredLayer split = lower::compile_conv2d(c, p, o);
  o.commands.split_first_gemms = false;
  LoweredLayer whole = lower::compile_conv2d(c, p, o);

  auto first_gemm = [](const LoweredLayer &l) -> std::pair<size_t, size_t> {
    const auto &cmds = l.commands.commands;
    for (size_t i = 0; i < cmds.size(); ++i)
      if (const auto *g = std::get_if<isa::GemmCommand>(&cmds[i]); g && !g->reset)
        return {i, l.commands.kernels.at(g->kernel).size()};
    return {cmds.size(), 0};
  };
  const auto [split_at, split_uops] = first_gemm(split);
  const auto [whole_at, whole_uops] = first_gemm(whole);
  // 4 blocks x 2 input blocks x 9 kernel positions, in one GEMM or in one per block's load.
  EXPECT_EQ(whole_uops, 4u * 2 * 9);
  EXPECT_EQ(split_uops, 2u * 9);
  // The parts, in order, hold exactly the whole GEMM's micro-ops; each waits for the token of
  // its own block's load (checked by the cycles below and by fsim's token checks).
  std::vector<isa::Uop> parts, all = whole.commands.kernels.at(
                                   std::get<isa::GemmCommand>(whole.commands.commands[whole_at]).kernel);
  for (size_t i = split_at; i < split.commands.commands.size() && parts.size() < all.size(); ++i)
    if (const auto *g = std::get_if<isa::GemmCommand>(&split.commands.commands[i])) {
      const auto &k = split.commands.kernels.at(g->kernel);
      parts.insert(parts.end(), k.begin(), k.end());
    }
  auto order = [](const isa::Uop &a, const isa::Uop &b) {
    return std::tie(a.dst, a.src, a.wgt) < std::tie(b.dst, b.src, b.wgt);
  };
  std::sort(parts.begin(), parts.end(), order);
  std::sort(all.begin(), all.end(), order);
  EXPECT_EQ(parts, all);
  EXPECT_GT(split.commands.count_gemm(), whole.commands.count_gemm());

  auto args = random_args(split.op, 31);
  auto want = test::conv2d_reference(c, p, args[0], args[1], args[2]);
  check_layer(c, split, args, want);
  check_layer(c, whole, args, want);
  if (const auto with = rtl_cycles(c, split, args)) {
    const uint64_t without = rtl_cycles(c, whole, args).value();
    EXPECT_LT(*with, without) << *with << " cycles split, " << without << " whole";
  }
}

// A tile's requantization runs channel block by channel block, each block's store right after
// its four ALU passes (bias add, shift, clip low, clip high), so storing starts early.
TEST(CodegenAccel, EachChannelBlockIsStoredAfterItsOwnRequantization) {
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p;
  p.height = p.width = 14;
  p.in_channels = 32;
  p.out_channels = 128;
  p.stride_h = p.stride_w = 2;
  LowerOptions o;
  o.vthreads = 2;
  o.schedule = lower::AccelSchedule{7, 7, 4, 1, 2};
  fit_shift(c, p, 41);
  LoweredLayer layer = lower::compile_conv2d(c, p, o);
  size_t alus = 0, stores = 0;
  for (const auto &cmd : layer.commands.commands) {
    if (std::holds_alternative<isa::GemmCommand>(cmd)) alus = 0;
    if (const auto *a = std::get_if<isa::AluCommand>(&cmd); a && !(a->use_imm && a->imm == 0 &&
                                                               a->op == isa::AluOp::kMul))
      ++alus;
    const auto *d = std::get_if<isa::DmaCommand>(&cmd);
    if (!d || !d->store) continue;
    ++stores;
    // Each store follows the passes of its own block, not of the tile's four.
    EXPECT_LE(alus, 4u) << "store " << stores;
    alus = 0;
  }
  EXPECT_GT(stores, 0u);
  auto args = random_args(layer.op, 41);
  check_layer(c, layer, args, test::conv2d_reference(c, p, args[0], args[1], args[2]));
}

// SqueezeNet's classifier: 63 output blocks (odd, so one thread), a tile of several blocks
// reaching across both ACC banks and stored at once. Its commands are not split by bank (a
// flagged command's token to the store engine vouches for its own bank only); fsim checks
// that every store waited for a token covering each entry it reads.
TEST(CodegenAccel, OneThreadTileAcrossBothAccBanksIsStoredAfterBoth) {
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p;
  p.height = p.width = 13;
  p.in_channels = 128;
  p.out_channels = 63 * c.block_out;
  p.kernel_h = p.kernel_w = 1;
  fit_shift(c, p, 51);
  LowerOptions o;
  o.vthreads = 2;
  LoweredLayer layer = lower::compile_conv2d(c, p, o);
  ASSERT_EQ(layer.schedule.vthreads, 1);
  const uint32_t half = static_cast<uint32_t>(c.acc_depth()) / 2;
  bool across = false;
  for (const auto &cmd : layer.commands.commands)
    if (const auto *d = std::get_if<isa::DmaCommand>(&cmd); d && d->store)
      across |= d->sram < half && d->sram + d->y * d->x > half;
  EXPECT_TRUE(across) << "no store reads both banks: the case is not exercised";
  auto args = random_args(layer.op, 51);
  check_layer(c, layer, args, test::conv2d_reference(c, p, args[0], args[1], args[2]));
}

TEST(CommandList, SerializationRoundTrips) {
  isa::HwConfig c = test::config_named("small");
  lower::Conv2dParams p;
  p.in_channels = p.out_channels = 16;
  p.height = p.width = 6;
  fit_shift(c, p, 3);
  LoweredLayer layer = lower::compile_conv2d(c, p);
  std::vector<uint8_t> bytes = isa::serialize(layer.commands);
  isa::CommandList back = isa::deserialize(bytes);
  EXPECT_EQ(back, layer.commands);
  EXPECT_EQ(isa::to_text(back), isa::to_text(layer.commands));
  // A round-tripped list runs like the original.
  LoweredLayer copy = layer;
  copy.commands = back;
  auto args = random_args(layer.op, 3);
  check_layer(c, copy, args, test::conv2d_reference(c, p, args[0], args[1], args[2]));
}

}  // namespace
}  // namespace vacc
