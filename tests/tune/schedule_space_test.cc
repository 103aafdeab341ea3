// Each accelerator operator's schedule space (lower/schedule_space.h), over random configs and
// layers: the heuristic's choice is a point of it that passes its rules; every point the rules
// accept lowers (planned scratchpads, ISA fields, program limits); sampled points of conv and
// dense run bit-exact on fsim and rtl against the plain C++ reference; refused points say why.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "layer_check.h"
#include "reference.h"
#include "vacc/isa/config.h"
#include "vacc/lower/layer_json.h"
#include "vacc/lower/lower.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/support/error.h"
#include "vacc/tune/candidates.h"

namespace vacc {
namespace {

using lower::AccelSchedule;
using lower::Layer;

isa::HwConfig bundled(const std::string &name) {
  return isa::load_config(std::string(VACC_CONFIG_DIR_FOR_TESTS) + "/" + name + ".yaml");
}

// A valid config with a random array, batch and scratchpads.
isa::HwConfig random_config(std::mt19937 &rng) {
  for (;;) {
    auto pick = [&](std::initializer_list<int> v) {
      return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
    };
    isa::HwConfig c;
    c.name = "random";
    c.batch = pick({1, 1, 2, 4});
    c.block_in = c.block_out = pick({8, 16});
    c.inp_kib = pick({4, 8, 32});
    c.wgt_kib = pick({16, 64, 256});
    c.acc_kib = pick({16, 32, 128});
    c.mem_bytes_per_cycle = pick({4, 8, 16});
    try {
      isa::validate_config(c);
      return c;
    } catch (const Error &) {
    }
  }
}

// A random layer of a random operator that check_supported accepts on `c`.
Layer random_layer(const isa::HwConfig &c, std::mt19937 &rng) {
  auto in = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (;;) {
    Layer layer;
    layer.name = "layer";
    const int64_t kind = in(0, 5);
    if (kind <= 2) {
      lower::Conv2dParams p;
      p.batch = c.batch * in(1, 2);
      p.in_channels = c.block_in * in(1, 4);
      p.out_channels = c.block_out * in(1, 4);
      p.height = in(3, 14);
      p.width = in(3, 14);
      p.kernel_h = p.kernel_w = in(0, 1) ? 3 : 1;
      p.stride_h = p.stride_w = in(1, 2);
      p.pad_h = p.pad_w = p.kernel_h == 3 ? in(0, 1) : 0;
      if (in(0, 4) == 0 && p.in_channels == p.out_channels * c.block_in / c.block_out)
        p.groups = p.out_channels / c.block_out;  // depthwise
      p.requant.shift = static_cast<int>(in(0, 12));
      if (in(0, 3) == 0)
        for (int64_t o = 0; o < p.out_channels; ++o) p.requant.channel_shifts.push_back(in(0, 9));
      if (kind == 1) p.residual = lower::Residual{0, 1, 1, -128, 127};
      if (kind == 2 && p.out_height() >= 3 && p.out_width() >= 3)
        p.pool = lower::PoolEpilogue{2, 2, 2, 2};
      layer.params = p;
    } else if (kind == 3) {
      lower::DenseParams p;
      p.batch = c.batch * in(1, 3);
      p.in_features = c.block_in * in(1, 6);
      p.out_features = c.block_out * in(1, 6);
      p.requant.shift = static_cast<int>(in(0, 12));
      layer.params = p;
    } else if (kind == 4) {
      lower::AddParams p;
      p.batch = c.batch;
      p.channels = c.block_out * in(1, 4);
      p.height = in(1, 9);
      p.width = in(1, 9);
      p.lshift_a = static_cast<int>(in(0, 2));
      p.rshift = static_cast<int>(in(0, 2));
      layer.params = p;
    } else {
      lower::PoolParams p;
      p.batch = c.batch;
      p.channels = c.block_out * in(1, 3);
      p.height = in(4, 12);
      p.width = in(4, 12);
      p.kernel_h = p.kernel_w = in(2, 3);
      p.stride_h = p.stride_w = 2;
      p.out_height = (p.height - p.kernel_h) / 2 + 1;
      p.out_width = (p.width - p.kernel_w) / 2 + 1;
      layer.params = p;
    }
    try {
      std::visit([&](const auto &p) { lower::check_supported(c, p, layer.name); }, layer.params);
      return layer;
    } catch (const Error &) {
    }
  }
}

TEST(ScheduleSpace, HeuristicIsAPointThatPassesItsRules) {
  std::mt19937 rng(7);
  int checked = 0;
  for (int i = 0; i < 200; ++i) {
    const isa::HwConfig c = random_config(rng);
    const Layer layer = random_layer(c, rng);
    SCOPED_TRACE(lower::workload_key(layer));
    const lower::ScheduleSpace space = lower::schedule_space(c, layer);
    for (int vthreads : {1, 2}) {
      AccelSchedule h;
      try {
        h = lower::heuristic_schedule(c, layer, vthreads);
      } catch (const Error &) {
        continue;  // no tile fits this config
      }
      const std::optional<uint64_t> at = space.find(h);
      ASSERT_TRUE(at) << lower::describe(h) << " is not a point of the space";
      EXPECT_EQ(lower::describe(space.at(*at)), lower::describe(h));
      EXPECT_EQ(lower::check_schedule(c, layer, h), std::nullopt) << lower::describe(h);
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
}

TEST(ScheduleSpace, IndicesRoundTrip) {
  std::mt19937 rng(3);
  for (int i = 0; i < 50; ++i) {
    const isa::HwConfig c = random_config(rng);
    const lower::ScheduleSpace space = lower::schedule_space(c, random_layer(c, rng));
    ASSERT_GT(space.size(), 0u);
    for (int k = 0; k < 20; ++k) {
      const uint64_t index = std::uniform_int_distribution<uint64_t>(0, space.size() - 1)(rng);
      EXPECT_EQ(space.find(space.at(index)), index);
      EXPECT_EQ(space.index(space.choices(index)), index);
    }
  }
}

// Every point the rules accept lowers: the rules are the operator's real constraints, not a
// guess that lets a program fail later.
TEST(ScheduleSpace, AcceptedPointsLower) {
  std::mt19937 rng(11);
  int lowered = 0;
  for (int i = 0; i < 40; ++i) {
    const isa::HwConfig c = random_config(rng);
    const Layer layer = random_layer(c, rng);
    SCOPED_TRACE(lower::workload_key(layer));
    const tune::Candidates cand = tune::enumerate_candidates(c, layer);
    for (int k = 0; k < 4 && cand.size() > 0; ++k) {
      const size_t p = std::uniform_int_distribution<size_t>(0, cand.size() - 1)(rng);
      lower::LowerOptions o;
      o.schedule = cand.schedule(p);
      try {
        lower::lower(c, layer, o);
        ++lowered;
      } catch (const Error &e) {
        ADD_FAILURE() << lower::describe(cand.schedule(p)) << " passed the rules but: "
                      << e.what();
      }
    }
  }
  EXPECT_GT(lowered, 100);
}

// How a layer travels to a tuning worker: every parameter survives the JSON round trip.
TEST(ScheduleSpace, LayersAndSchedulesRoundTripThroughJson) {
  std::mt19937 rng(13);
  for (int i = 0; i < 100; ++i) {
    const isa::HwConfig c = random_config(rng);
    const Layer layer = random_layer(c, rng);
    const Layer back = lower::layer_from_json(lower::to_json(layer), "test");
    EXPECT_EQ(lower::to_json(back).dump(), lower::to_json(layer).dump());
    EXPECT_EQ(lower::workload_key(back), lower::workload_key(layer));
    const lower::ScheduleSpace space = lower::schedule_space(c, layer);
    const AccelSchedule s = space.at(std::uniform_int_distribution<uint64_t>(0, space.size() - 1)(rng));
    EXPECT_EQ(lower::describe(lower::schedule_from_json(lower::to_json(s), "test")),
              lower::describe(s));
  }
  try {
    lower::layer_from_json(nlohmann::json{{"op", "conv2d"}, {"batch", "one"}}, "request");
    ADD_FAILURE() << "a malformed layer was read";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "request: field 'batch' must be an integer");
  }
}

TEST(ScheduleSpace, RefusedPointsSayWhy) {
  const isa::HwConfig c = bundled("small");
  lower::Conv2dParams p;
  p.in_channels = p.out_channels = 4 * c.block_in;
  p.height = p.width = 12;
  const Layer layer{"conv", p};
  AccelSchedule s = lower::heuristic_schedule(c, layer, 2);
  AccelSchedule bad = s;
  bad.tile_h = 13;
  EXPECT_EQ(lower::check_schedule(c, layer, bad), "tile_h = 13 must be 1 to its extent 12");
  bad = s;
  bad.tile_h = bad.tile_w = 12;
  bad.tile_oc = 4;
  bad.tile_ic = 4;
  bad.vthreads = 1;
  EXPECT_NE(lower::check_schedule(c, layer, bad).value_or("").find("tiles per thread"),
            std::string::npos);
  bad = s;
  bad.vthreads = 1;
  bad.vthread_rows = true;
  EXPECT_EQ(lower::check_schedule(c, layer, bad), "vthread_rows needs 2 virtual threads");
}

// Runs `layer` under schedule `s` on fsim and rtl (check_layer) against the plain C++ reference
// of tests/compiler/reference.h, on random operands of seed `k`. Without `rtl` (a config
// whose RTL model is not built in): the loop-IR interpreter and fsim only.
void expect_bit_exact(const isa::HwConfig &c, const Layer &layer, const lower::AccelSchedule &s,
                      int k, bool rtl = true) {
  SCOPED_TRACE(lower::describe(s));
  lower::LowerOptions o;
  o.schedule = s;
  const lower::LoweredLayer lowered = lower::lower(c, layer, o);
  std::vector<std::vector<int64_t>> args;
  std::vector<int64_t> want;
  if (const auto *cp = std::get_if<lower::Conv2dParams>(&layer.params)) {
    const auto data = test::random_values(cp->batch * cp->in_channels * cp->height * cp->width,
                                          -128, 127, 1 + k);
    const auto kernel = test::random_values(
        cp->out_channels * cp->in_channels / cp->groups * cp->kernel_h * cp->kernel_w, -128, 127,
        2 + k);
    const auto bias = test::random_values(cp->batch / c.batch * cp->out_channels * c.batch,
                                          -3000, 3000, 3 + k);
    want = test::conv2d_reference(c, *cp, data, kernel, bias);
    args = {data, kernel, bias, std::vector<int64_t>(want.size(), 0)};
  } else {
    const auto &dp = std::get<lower::DenseParams>(layer.params);
    const auto data = test::random_values(dp.batch * dp.in_features, -128, 127, 4 + k);
    const auto weight = test::random_values(dp.out_features * dp.in_features, -128, 127, 5 + k);
    const auto bias = test::random_values(dp.out_features * c.batch, -3000, 3000, 6 + k);
    want = test::dense_reference(c, dp, data, weight, bias);
    args = {data, weight, bias, std::vector<int64_t>(want.size(), 0)};
  }
  if (rtl) return test::check_layer(c, lowered, args, want);
  int64_t macs = 0;
  EXPECT_EQ(test::interpret_layer(c, lowered, args, &macs), want) << "interpreter vs reference";
  EXPECT_EQ(test::run_layer("fsim", c, lowered, args).out, want) << "fsim vs reference";
}

// The first point of each kind among `cand`'s, by kind; `kind_of` gives a point's kind, or
// nullopt for points of no interest.
template <class KindOf>
auto first_of_each_kind(const tune::Candidates &cand, KindOf kind_of) {
  std::map<typename decltype(kind_of(AccelSchedule{}))::value_type, size_t> first;
  for (size_t p = 0; p < cand.size(); ++p)
    if (auto kind = kind_of(cand.schedule(p))) first.emplace(*kind, p);
  return first;
}

// The DRAM bytes the program of `s` (which the operator's rules accept) loads.
uint64_t load_bytes(const isa::HwConfig &c, const Layer &layer, const AccelSchedule &s) {
  EXPECT_EQ(lower::check_schedule(c, layer, s), std::nullopt) << lower::describe(s);
  lower::LowerOptions o;
  o.schedule = s;
  return lower::lower(c, layer, o).traffic.load_bytes;
}

// Sampled legal points of conv and dense layers, each bit-exact on fsim and rtl.
TEST(ScheduleSpace, SampledPointsAreBitExactOnSmall) {
  const isa::HwConfig c = bundled("small");
  std::mt19937 rng(5);
  lower::Conv2dParams conv;
  conv.in_channels = 2 * c.block_in;
  conv.out_channels = 2 * c.block_out;
  conv.height = conv.width = 6;
  conv.requant.shift = 9;
  lower::Conv2dParams strided = conv;
  strided.stride_h = strided.stride_w = 2;
  strided.height = 7;
  lower::DenseParams dense;
  dense.batch = 3 * c.batch;
  dense.in_features = 3 * c.block_in;
  dense.out_features = 2 * c.block_out;
  dense.requant.shift = 7;
  int runs = 0;
  for (const Layer &layer : {Layer{"conv", conv}, Layer{"strided", strided}, Layer{"dense", dense}}) {
    SCOPED_TRACE(layer.name);
    const tune::Candidates cand = tune::enumerate_candidates(c, layer);
    ASSERT_GT(cand.size(), 4u);
    for (int k = 0; k < 4; ++k) {
      const size_t p = std::uniform_int_distribution<size_t>(0, cand.size() - 1)(rng);
      expect_bit_exact(c, layer, cand.schedule(p), k);
      ++runs;
    }
  }
  EXPECT_EQ(runs, 12);
}

// Three and four virtual threads, over channel tiles and over rows: legal points of each kind
// are in the space and run bit-exact on fsim and rtl.
TEST(ScheduleSpace, ThreeAndFourVirtualThreadsAreBitExactOnSmall) {
  const isa::HwConfig c = bundled("small");
  lower::Conv2dParams conv;
  conv.in_channels = 2 * c.block_in;
  conv.out_channels = 12 * c.block_out;
  conv.height = conv.width = 12;
  conv.requant.shift = 10;
  lower::DenseParams dense;
  dense.batch = 2 * c.batch;
  dense.in_features = 2 * c.block_in;
  dense.out_features = 12 * c.block_out;
  dense.requant.shift = 7;
  int runs = 0;
  for (const Layer &layer : {Layer{"conv", conv}, Layer{"dense", dense}}) {
    SCOPED_TRACE(layer.name);
    const tune::Candidates cand = tune::enumerate_candidates(c, layer);
    // (vthreads, over rows) -> a point
    const auto first = first_of_each_kind(cand, [](const AccelSchedule &s) {
      return s.vthreads > 2 ? std::optional(std::make_pair(s.vthreads, s.vthread_rows))
                            : std::nullopt;
    });
    for (int v : {3, 4}) EXPECT_TRUE(first.count({v, false})) << v << " threads over channels";
    if (layer.name == "conv")
      for (int v : {3, 4}) EXPECT_TRUE(first.count({v, true})) << v << " threads over rows";
    for (const auto &[kind, p] : first) {
      expect_bit_exact(c, layer, cand.schedule(p), runs);
      ++runs;
    }
  }
  EXPECT_EQ(runs, 6);
}

// The loop-order knob: with weights (inputs) resident, a layer's operands move once per tile of
// the other operand's outer loop instead of once per tile (the load bytes drop by exactly the
// reloads saved), and points of both orders run bit-exact on fsim and rtl, with and without
// threads, over plain and depthwise convolutions and a many-row dense (the fused pool and
// residual in tests/codegen_accel).
TEST(ScheduleSpace, ResidentOperandsLoadOnceAndAreBitExactOnSmall) {
  using Resident = AccelSchedule::Resident;
  const isa::HwConfig c = bundled("small");
  lower::Conv2dParams conv;
  conv.in_channels = 2 * c.block_in;
  conv.out_channels = 4 * c.block_out;
  conv.height = conv.width = 8;
  conv.kernel_h = conv.kernel_w = 3;
  conv.pad_h = conv.pad_w = 1;
  conv.requant.shift = 10;
  lower::Conv2dParams depthwise = conv;
  depthwise.in_channels = depthwise.out_channels;
  depthwise.groups = depthwise.out_channels / c.block_out;
  depthwise.requant.shift = 7;
  lower::DenseParams dense;
  dense.batch = 4 * c.batch;
  dense.in_features = 3 * c.block_in;
  dense.out_features = 4 * c.block_out;
  dense.requant.shift = 7;
  lower::DenseParams one_row = dense;  // a classifier: no row tiles to keep weights across
  one_row.batch = c.batch;

  // The exact saving: (reloads - 1) x the operand's bytes.
  {
    const Layer layer{"conv", conv};
    AccelSchedule s;
    s.tile_h = s.tile_w = 4;  // four spatial tiles
    s.tile_oc = 1;            // four channel tiles
    s.tile_ic = 1;
    s.bias_once = true;  // the bias moves once in every order
    const auto loads = [&](Resident r) {
      AccelSchedule with = s;
      with.resident = r;
      return load_bytes(c, layer, with);
    };
    const uint64_t none = loads(Resident::kNone);
    const uint64_t weights = 4 * 2 * 9 * c.wgt_tile_bytes();  // all of them, once
    EXPECT_EQ(none - loads(Resident::kWeights), (4 - 1) * weights);
    // Each spatial tile's input window (less the padding, which the DMA does not read) moves
    // once per channel tile without residency, once with it.
    const uint64_t inputs = none - 4 * weights - 4 * c.acc_tile_bytes();
    EXPECT_EQ(none - loads(Resident::kInputs), inputs / 4 * (4 - 1));
  }

  int runs = 0;
  for (const Layer &layer : {Layer{"conv", conv}, Layer{"depthwise", depthwise},
                             Layer{"dense", dense}, Layer{"one_row", one_row}}) {
    SCOPED_TRACE(layer.name);
    const tune::Candidates cand = tune::enumerate_candidates(c, layer);
    // One point per (resident, vthreads, over rows), resident ones only.
    const auto first = first_of_each_kind(cand, [](const AccelSchedule &s) {
      return s.resident != Resident::kNone
                 ? std::optional(
                       std::make_tuple(static_cast<int>(s.resident), s.vthreads, s.vthread_rows))
                 : std::nullopt;
    });
    EXPECT_EQ(first.count({1, 1, false}), layer.name != "one_row") << "weights resident";
    EXPECT_EQ(first.count({1, 2, false}), layer.name != "one_row") << "weights resident, 2 threads";
    if (layer.name == "depthwise")
      EXPECT_FALSE(first.count({2, 1, false})) << "inputs resident, grouped";
    else
      EXPECT_TRUE(first.count({2, 2, false})) << "inputs resident, two threads";
    for (const auto &[kind, p] : first) {
      expect_bit_exact(c, layer, cand.schedule(p), runs);
      ++runs;
    }
  }
  EXPECT_GT(runs, 12);
}

// With batch blocks (gemm.batch 2, a batch of 4): resident weights load once per batch block,
// a convolution's outermost loop, and resident points of conv and dense stay bit-exact on fsim
// against the reference (the loop-IR interpreter too; this config has no RTL model built in).
TEST(ScheduleSpace, ResidentOperandsWithBatchBlocks) {
  isa::HwConfig c = bundled("small");
  c.name = "small-batch2";
  c.batch = 2;
  isa::validate_config(c);
  using Resident = AccelSchedule::Resident;
  lower::Conv2dParams conv;
  conv.batch = 2 * c.batch;
  conv.in_channels = 2 * c.block_in;
  conv.out_channels = 2 * c.block_out;
  conv.height = conv.width = 6;
  conv.kernel_h = conv.kernel_w = 3;
  conv.pad_h = conv.pad_w = 1;
  conv.requant.shift = 10;
  lower::DenseParams dense;
  dense.batch = 4 * c.batch;
  dense.in_features = 3 * c.block_in;
  dense.out_features = 4 * c.block_out;
  dense.requant.shift = 7;
  {
    const Layer layer{"conv", conv};
    AccelSchedule s;
    s.tile_h = s.tile_w = 3;  // four spatial tiles per batch block
    s.tile_oc = s.tile_ic = 1;
    s.bias_once = true;
    const auto loads = [&](Resident r) {
      AccelSchedule with = s;
      with.resident = r;
      return load_bytes(c, layer, with);
    };
    // Each of the two batch blocks loads all weights once instead of once per spatial tile.
    const uint64_t weights = 2 * 2 * 9 * c.wgt_tile_bytes();
    EXPECT_EQ(loads(Resident::kNone) - loads(Resident::kWeights), 2 * (4 - 1) * weights);
  }
  int runs = 0;
  for (const Layer &layer : {Layer{"conv", conv}, Layer{"dense", dense}}) {
    SCOPED_TRACE(layer.name);
    const tune::Candidates cand = tune::enumerate_candidates(c, layer);
    // (resident, vthreads) -> a point
    const auto first = first_of_each_kind(cand, [](const AccelSchedule &s) {
      return s.resident != Resident::kNone && !s.vthread_rows
                 ? std::optional(std::make_pair(static_cast<int>(s.resident), s.vthreads))
                 : std::nullopt;
    });
    for (int r : {1, 2})
      for (int v : {1, 2}) EXPECT_TRUE(first.count({r, v})) << "resident " << r << ", vt" << v;
    for (const auto &[kind, p] : first) {
      expect_bit_exact(c, layer, cand.schedule(p), runs, /*rtl=*/false);
      ++runs;
    }
  }
  EXPECT_GE(runs, 8);
}

// A one-row dense layer's heuristic keeps its input resident where a thread has several channel
// tiles: the input then moves once per thread, not once per channel tile.
TEST(ScheduleSpace, OneRowDenseHeuristicKeepsItsInput) {
  const isa::HwConfig c = bundled("small");
  lower::DenseParams p;
  p.batch = c.batch;
  p.in_features = 8 * c.block_in;
  p.out_features = 64 * c.block_out;
  p.requant.shift = 7;
  const Layer layer{"fc", p};
  const AccelSchedule h = lower::heuristic_schedule(c, layer, 2);
  ASSERT_GT(p.out_features / c.block_out / h.tile_oc / h.vthreads, 1);
  EXPECT_EQ(h.resident, AccelSchedule::Resident::kInputs) << lower::describe(h);
  AccelSchedule reloading = h;
  reloading.resident = AccelSchedule::Resident::kNone;
  const uint64_t before = load_bytes(c, layer, reloading);
  const uint64_t after = load_bytes(c, layer, h);
  const uint64_t input = 8 * c.batch * c.block_in * c.inp_bits / 8;
  const uint64_t tiles_per_thread = p.out_features / c.block_out / h.tile_oc / h.vthreads;
  EXPECT_EQ(before - after, h.vthreads * (tiles_per_thread - 1) * input);
  expect_bit_exact(c, layer, h, 3);
}

TEST(ScheduleSpace, InputsResidentRefusedForGroupedConvolutions) {
  const isa::HwConfig c = bundled("small");
  lower::Conv2dParams p;
  p.in_channels = p.out_channels = 4 * c.block_in;
  p.groups = 4;
  p.height = p.width = 8;
  const Layer layer{"dw", p};
  AccelSchedule s = lower::heuristic_schedule(c, layer, 1);
  s.resident = AccelSchedule::Resident::kInputs;
  EXPECT_EQ(lower::check_schedule(c, layer, s),
            "inputs resident (resident = 2) needs groups = 1: a grouped convolution's channel "
            "tiles read different inputs");
  s.resident = AccelSchedule::Resident::kWeights;
  EXPECT_EQ(lower::check_schedule(c, layer, s), std::nullopt);
}

// Whether any tile of `s` ends in a tail on `layer` (a size that does not divide its axis).
bool has_tail(const isa::HwConfig &c, const Layer &layer, const AccelSchedule &s) {
  for (const lower::Knob &k : lower::schedule_space(c, layer).knobs)
    if (k.name.rfind("tile_", 0) == 0 && k.values.back() % lower::knob_value(s, k.name) != 0)
      return true;
  return false;
}

// Tiles that do not divide their axes (rows, columns, output and input channel blocks, a dense
// layer's row blocks): sampled points with tails, plain and depthwise convolutions and a dense
// layer whose every axis has three blocks, bit-exact against the reference on the loop-IR
// interpreter and fsim, every fifth also on rtl. (The fused pool, residual and per-channel
// requantization run tails in their own tests, codegen_accel.)
TEST(ScheduleSpace, TailTilesAreBitExactOnSmall) {
  const isa::HwConfig c = bundled("small");
  std::mt19937 rng(5);
  lower::Conv2dParams conv;
  conv.in_channels = 3 * c.block_in;
  conv.out_channels = 3 * c.block_out;
  conv.height = conv.width = 7;
  conv.kernel_h = conv.kernel_w = 3;
  conv.pad_h = conv.pad_w = 1;
  conv.requant.shift = 9;
  lower::Conv2dParams depthwise = conv;
  depthwise.groups = 3;
  depthwise.stride_h = depthwise.stride_w = 2;
  lower::DenseParams dense;
  dense.batch = 5 * c.batch;
  dense.in_features = 3 * c.block_in;
  dense.out_features = 3 * c.block_out;
  dense.requant.shift = 7;
  int runs = 0;
  for (const Layer &layer :
       {Layer{"conv", conv}, Layer{"depthwise", depthwise}, Layer{"dense", dense}}) {
    SCOPED_TRACE(layer.name);
    const tune::Candidates cand = tune::enumerate_candidates(c, layer);
    std::vector<size_t> tails;
    for (size_t q = 0; q < cand.size(); ++q)
      if (has_tail(c, layer, cand.schedule(q))) tails.push_back(q);
    ASSERT_GT(tails.size(), 10u) << "the space offers no tails";
    std::shuffle(tails.begin(), tails.end(), rng);
    for (size_t k = 0; k < 10; ++k) expect_bit_exact(c, layer, cand.schedule(tails[k]), k, k % 5 == 0);
    runs += 10;
  }
  EXPECT_EQ(runs, 30);
}

}  // namespace
}  // namespace vacc
