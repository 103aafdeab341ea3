// One device program across consecutive accelerator steps (runtime/program_replay.h), held
// against the same command lists run one program each: random chains of convolutions (each
// step reading the step before's output where the layouts meet, the others their own data)
// with random schedules, on configs whose WGT scratchpad does and does not leave room to move
// a step's weights apart, bit for bit on fsim (which enforces the token protocol), on fsim
// running every engine as far ahead as its tokens allow (a race the tokens do not prevent
// changes the results there), on perf, and on rtl for the bundled config, where perf's cycles
// must equal the RTL's.
#include "vacc/runtime/program_replay.h"

#include <gtest/gtest.h>

#include <random>

#include "layer_kit.h"
#include "program_kit.h"
#include "vacc/driver/device.h"
#include "vacc/lower/lower.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/runtime/replay.h"
#include "vacc/runtime/session.h"
#include "vacc/support/error.h"

namespace vacc {
namespace {

struct ChainStep {
  lower::LoweredLayer lowered;
  std::vector<std::vector<uint8_t>> init;  // per buffer; the input empty when chained
  bool chained = false;                    // buffer 0 is the step before's output
};

// A schedule drawn from the layer's space, or the heuristic's when no draw passes its rules.
lower::AccelSchedule random_schedule(const isa::HwConfig &config, const lower::Layer &layer,
                                     std::mt19937 &rng) {
  const lower::ScheduleSpace space = lower::schedule_space(config, layer);
  lower::AccelSchedule s = lower::heuristic_schedule(config, layer, 1 + rng() % 2);
  for (int attempt = 0; attempt < 20; ++attempt) {
    lower::AccelSchedule t = s;
    for (const lower::Knob &k : space.knobs)
      lower::set_knob(&t, k.name, k.values[rng() % k.values.size()]);
    if (!lower::check_schedule(config, layer, t)) return t;
  }
  return s;
}

std::vector<uint8_t> buffer_values(const isa::HwConfig &config, const isa::CommandBuffer &b,
                                   std::mt19937 &rng) {
  const size_t bytes = b.elements * config.tile_bytes(b.mem);
  if (b.mem == isa::MemId::kInp || b.mem == isa::MemId::kWgt) return test::random_bytes(rng, bytes);
  if (b.mem == isa::MemId::kOut) return std::vector<uint8_t>(bytes, 0);
  // ACC operands: biases, shifts, multipliers; in ranges that keep the requantization exact.
  const bool bias = b.name.find("bias") != std::string::npos;
  return test::int32_bytes(test::random_ints(rng, bytes / 4, bias ? -2000 : 0, bias ? 2000 : 7));
}

std::vector<ChainStep> random_chain(const isa::HwConfig &config, std::mt19937 &rng) {
  const int64_t bi = config.block_in, bo = config.block_out;
  const int64_t hw = std::vector<int64_t>{4, 7, 9, 14}[rng() % 4];
  int64_t channels = bi * (1 + rng() % 3);
  std::vector<ChainStep> chain;
  const int steps = 3 + static_cast<int>(rng() % 3);
  for (int i = 0; i < steps; ++i) {
    lower::Conv2dParams p;
    p.batch = config.batch;
    p.height = p.width = hw;
    p.in_channels = channels;
    p.out_channels = bo * (1 + rng() % 3);
    const int64_t k = rng() % 2 ? 3 : 1;
    p.kernel_h = p.kernel_w = k;
    p.pad_h = p.pad_w = k / 2;
    if (bi == bo && p.in_channels == p.out_channels && rng() % 4 == 0)
      p.groups = p.out_channels / bo;  // depthwise
    const lower::Layer layer{"step" + std::to_string(i), p};
    lower::LowerOptions lo;
    lo.schedule = random_schedule(config, layer, rng);
    ChainStep s;
    s.lowered = lower::lower(config, layer, lo);
    const isa::CommandList &list = s.lowered.commands;
    for (const isa::CommandBuffer &b : list.buffers)
      s.init.push_back(buffer_values(config, b, rng));
    // The step before's output is this step's input where their layouts meet, unless the
    // draw keeps them apart (steps reading data no step of the program wrote).
    if (!chain.empty() && rng() % 4 != 0) {
      const isa::CommandBuffer &out = chain.back().lowered.commands.buffers.back();
      const isa::CommandBuffer &in = list.buffers.front();
      if (out.elements * config.tile_bytes(out.mem) == in.elements * config.tile_bytes(in.mem)) {
        s.chained = true;
        s.init.front().clear();
      }
    }
    channels = p.out_channels;
    chain.push_back(std::move(s));
  }
  return chain;
}

struct ChainRun {
  std::vector<std::vector<uint8_t>> outputs;  // each step's output buffer after the run
  uint64_t cycles = 0;                        // engines with a cycle counter
  int shifted = 0;                            // steps whose weights moved (merged runs)
  std::vector<std::string> boundaries;        // ProgramReplay::boundaries() (merged runs)
};

// Each step its own program, in order, a chained input taken from the step before's output.
// "fsim-ahead": fsim with DeviceOptions::fsim_latest_first.
std::unique_ptr<driver::Device> open(const std::string &engine, const isa::HwConfig &config) {
  driver::DeviceOptions o;
  o.fsim_latest_first = engine == "fsim-ahead";
  return driver::open_device(engine == "fsim-ahead" ? "fsim" : engine, config, o);
}

ChainRun run_apart(const std::string &engine, const isa::HwConfig &config,
                   const std::vector<ChainStep> &chain) {
  ChainRun r;
  for (const ChainStep &s : chain) {
    std::vector<std::vector<uint8_t>> init = s.init;
    if (s.chained) init.front() = r.outputs.back();
    const auto device = open(engine, config);  // a device holds one arena
    const runtime::ListRun run =
        runtime::run_command_list(*device, config, s.lowered.commands, init);
    r.outputs.push_back(run.buffers.back());
    if (auto it = run.counters.find("cycles"); it != run.counters.end()) r.cycles += it->second;
  }
  return r;
}

// The whole chain as one program.
ChainRun run_merged(const std::string &engine, const isa::HwConfig &config,
                    const std::vector<ChainStep> &chain) {
  const auto device = open(engine, config);
  const uint64_t align = isa::region_alignment(config);
  auto aligned = [&](uint64_t b) { return (b + align - 1) / align * align; };
  uint64_t uops = 16, insns = 64, bytes = 0;
  for (const ChainStep &s : chain) {
    uops += s.lowered.commands.total_kernel_uops() + 16;
    insns += 2 * s.lowered.commands.commands.size() + 64;
    for (const isa::CommandBuffer &b : s.lowered.commands.buffers)
      bytes += aligned(std::max<uint64_t>(b.elements * config.tile_bytes(b.mem), 1));
  }
  bytes += aligned(uops * config.uop_bytes()) + aligned(insns * isa::kInsnBytes) + 2 * align;
  runtime::Session session(*device, config, bytes, uops, insns);
  std::vector<runtime::DeviceBuffer> outputs;
  runtime::CommandQueue queue = session.queue();
  runtime::ProgramReplay program(queue, config);
  for (const ChainStep &s : chain) {
    const isa::CommandList &list = s.lowered.commands;
    std::vector<uint64_t> elements;
    std::vector<runtime::ProgramReplay::Source> sources;
    for (size_t b = 0; b < list.buffers.size(); ++b) {
      const isa::CommandBuffer &cb = list.buffers[b];
      using Source = runtime::ProgramReplay::Source;
      const bool operand = b == 0 || b + 1 == list.buffers.size();
      sources.push_back(!operand              ? Source::kConstant
                        : b == 0 && s.chained ? Source::kPrevious
                                              : Source::kEarlier);
      if (b == 0 && s.chained) {
        elements.push_back(session.element_of(outputs.back(), cb.mem));
        continue;
      }
      const uint64_t n = cb.elements * config.tile_bytes(cb.mem);
      const runtime::DeviceBuffer buffer = session.allocate(std::max<uint64_t>(n, 1), cb.name);
      session.write(buffer, s.init[b].data(), n);
      elements.push_back(session.element_of(buffer, cb.mem));
      if (b + 1 == list.buffers.size()) outputs.push_back(buffer);
    }
    program.add(list, elements, sources);
  }
  ChainRun r;
  const driver::Counters counters = session.run(queue);
  if (auto it = counters.find("cycles"); it != counters.end()) r.cycles = it->second;
  for (const runtime::DeviceBuffer &o : outputs) {
    r.outputs.emplace_back(o.bytes);
    session.read(o, r.outputs.back().data(), o.bytes);
  }
  r.shifted = program.shifted_steps();
  r.boundaries = program.boundaries();
  return r;
}

isa::HwConfig with(isa::HwConfig c, int batch, int wgt_kib) {
  c.batch = batch;
  c.wgt_kib = wgt_kib;
  return c;
}

TEST(ProgramReplay, RandomChainsBitExactAgainstAProgramPerStep) {
  const isa::HwConfig base = test::config_named("default");
  const std::vector<isa::HwConfig> configs = {
      base,
      test::config_named("small"),
      test::config_named("wide"),
      with(base, 2, base.wgt_kib),  // a batched core
      with(base, 1, 8),             // 32 weight entries: often no room apart
  };
  int shifted = 0, chained = 0, steps = 0, moved = 0, waited = 0;
  for (size_t c = 0; c < configs.size(); ++c) {
    const isa::HwConfig &config = configs[c];
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      std::mt19937 rng(seed * 131 + static_cast<uint32_t>(c));
      std::vector<ChainStep> chain;
      try {
        chain = random_chain(config, rng);
      } catch (const Error &e) {  // a draw the small scratchpads cannot hold
        continue;
      }
      for (const ChainStep &s : chain) chained += s.chained;
      steps += static_cast<int>(chain.size());
      for (const std::string engine : {"fsim", "fsim-ahead", "perf"}) {
        SCOPED_TRACE(config.name + " wgt_kib " + std::to_string(config.wgt_kib) + " batch " +
                     std::to_string(config.batch) + " seed " + std::to_string(seed) + " " + engine);
        const ChainRun apart = run_apart(engine, config, chain);
        const ChainRun merged = run_merged(engine, config, chain);
        ASSERT_EQ(merged.outputs.size(), apart.outputs.size());
        for (size_t i = 0; i < chain.size(); ++i)
          EXPECT_EQ(merged.outputs[i], apart.outputs[i]) << "step " << i;
        if (engine == "perf") {
          EXPECT_LE(merged.cycles, apart.cycles);
          shifted += merged.shifted;
          for (const std::string &b : merged.boundaries) {
            moved += b.rfind("weights moved", 0) == 0;
            waited += b.rfind("weights wait", 0) == 0;
          }
        }
      }
    }
  }
  EXPECT_GT(steps, 40);
  EXPECT_GT(chained, 10) << "too few steps read the step before's output";
  EXPECT_GT(shifted, 0) << "no step's weights were moved apart";
  EXPECT_EQ(moved, shifted) << "each moved step says so";
  EXPECT_GT(waited, 0) << "no step met a step before that left no room (32 WGT entries)";
}

TEST(ProgramReplay, RtlRunsAMergedChainAsPerfTimesIt) {
  const isa::HwConfig config = test::config_named("default");
  std::mt19937 rng(7);
  const std::vector<ChainStep> chain = random_chain(config, rng);
  const ChainRun on_rtl = run_merged("rtl", config, chain);
  const ChainRun on_perf = run_merged("perf", config, chain);
  const ChainRun apart = run_apart("fsim", config, chain);
  EXPECT_EQ(on_rtl.outputs, apart.outputs);
  EXPECT_EQ(on_perf.outputs, apart.outputs);
  EXPECT_GT(on_rtl.cycles, 0u);
  EXPECT_EQ(on_perf.cycles, on_rtl.cycles);
}

TEST(ProgramReplay, WeightFootprintAndShift) {
  isa::CommandList list;
  list.buffers = {{"w", isa::MemId::kWgt, 64}};
  isa::DmaCommand load;
  load.mem = isa::MemId::kWgt;
  load.sram = 4;
  load.y = 2;
  load.x = 3;
  load.stride = 3;
  list.commands.push_back(load);
  isa::GemmCommand g;
  g.kernel = list.intern_kernel({{0, 0, 5}, {1, 0, 6}});
  g.loop_out = 2;
  g.loop_in = 3;
  g.wgt = {10, 1};
  list.commands.push_back(g);
  isa::AluCommand a;
  a.kernel = g.kernel;  // shares the GEMM's kernel: the ALU's copy keeps its fields
  list.commands.push_back(a);
  // Loads [4, 10); the GEMM reads 5..6 + (0..1)*10 + (0..2)*1, i.e. up to 18.
  const runtime::WgtFootprint f = runtime::wgt_footprint(list);
  EXPECT_EQ(f.first, 4u);
  EXPECT_EQ(f.end, 19u);
  const isa::CommandList moved = runtime::shift_weights(list, 100);
  const runtime::WgtFootprint m = runtime::wgt_footprint(moved);
  EXPECT_EQ(m.first, 104u);
  EXPECT_EQ(m.end, 119u);
  const auto &mg = std::get<isa::GemmCommand>(moved.commands[1]);
  EXPECT_EQ(moved.kernels.at(mg.kernel), (isa::UopKernel{{0, 0, 105}, {1, 0, 106}}));
  const auto &ma = std::get<isa::AluCommand>(moved.commands[2]);
  EXPECT_EQ(moved.kernels.at(ma.kernel), list.kernels.at(a.kernel));
}

}  // namespace
}  // namespace vacc
