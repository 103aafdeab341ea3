// The perf engine against the RTL, fsim and itself: its device memory is the RTL's (configs
// with a built-in model), its own counts of MACs, micro-ops, ALU operations, instructions and bytes
// per memory kind equal fsim's, fast-forward changes no counter and no slice, a timing-only run
// counts the same and moves no data, and its timeline has the rtl engine's format.
#include "vacc/simulator/perf_sim.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "layer_bench.h"
#include "test_configs.h"
#include "vacc/driver/perf_device.h"
#include "vacc/isa/assembly.h"
#include "vacc/isa/config.h"
#include "vacc/progen/progen.h"
#include "vacc/progen/workloads.h"
#include "vacc/simulator/fsim.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/support/error.h"

namespace vacc::sim {
namespace {

struct PerfRun {
  std::vector<uint8_t> dram;
  std::map<std::string, uint64_t> counters;
  std::vector<InsnSlice> slices;
};

PerfRun run_perf(const isa::HwConfig &config, const isa::Program &p, PerfOptions o = {}) {
  o.record_slices = true;
  PerfSim perf(config, o);
  PerfRun r;
  r.dram = p.dram;
  perf.run(r.dram, p.insn_offset, p.insn_count);
  r.counters = perf.counters();
  r.slices = perf.slices();
  return r;
}

// Configs: the bundled ones and two that are not (tests/perf/configs).
class PerfSimTest : public ::testing::TestWithParam<std::string> {};

// perf computes its data with fsim, so its device memory is held to an engine that does not:
// the RTL (the bundled configs' models are built in; the others are held to it in
// perf_equals_rtl_test). Its own counts of work are held to fsim's.
TEST_P(PerfSimTest, MemoryIsRtlsAndCountsAreFsims) {
  const isa::HwConfig config = config_named(GetParam());
  std::unique_ptr<RtlSim> rtl;
  if (rtl_model_available(config)) {
    RtlOptions ro;
    ro.cycle_limit = 2'000'000;
    rtl = std::make_unique<RtlSim>(config, ro);
  }
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const isa::Program p = progen::generate_program(config, seed);
    std::vector<uint8_t> expect = p.dram;
    Fsim fsim(config);
    fsim.run(expect, p.insn_offset, p.insn_count);
    const FsimStats &s = fsim.stats();
    const PerfRun r = run_perf(config, p);
    if (rtl) {
      std::vector<uint8_t> independent = p.dram;
      rtl->run(independent, p.insn_offset, p.insn_count);
      ASSERT_EQ(r.dram, independent) << "seed " << seed << ": perf's device memory is not rtl's";
    }
    auto at = [&](const std::string &k) {
      auto it = r.counters.find(k);
      return it == r.counters.end() ? uint64_t{0} : it->second;
    };
    EXPECT_EQ(at("macs"), s.macs) << "seed " << seed;
    EXPECT_EQ(at("gemm_uops"), s.gemm_uops) << "seed " << seed;
    EXPECT_EQ(at("alu_ops"), s.alu_ops) << "seed " << seed;
    for (int e = 0; e < isa::kNumEngines; ++e)
      EXPECT_EQ(at(std::string("insns_") + isa::engine_name(static_cast<isa::Engine>(e))),
                s.insns[e])
          << "seed " << seed;
    for (int m = 0; m < isa::kNumMemIds; ++m) {
      const std::string name = isa::mem_id_name(static_cast<isa::MemId>(m));
      EXPECT_EQ(at("load_bytes_" + name), s.load_bytes[m]) << "seed " << seed << " " << name;
      EXPECT_EQ(at("store_bytes_" + name), s.store_bytes[m]) << "seed " << seed << " " << name;
    }
    EXPECT_EQ(at("dram_write_bytes"), s.store_bytes[static_cast<int>(isa::MemId::kOut)]);
    EXPECT_GT(at("cycles"), 0u);
  }
}

TEST_P(PerfSimTest, FastForwardChangesNoCounterAndNoSlice) {
  const isa::HwConfig config = config_named(GetParam());
  std::vector<isa::Program> programs;
  for (uint64_t seed = 100; seed < 160; ++seed)
    programs.push_back(progen::generate_program(config, seed));
  programs.push_back(progen::make_pipeline_program(config, 6, 4, true, 2));
  programs.push_back(progen::make_gemm_stream(config, 8, 64));
  uint64_t stepped = 0, cycles = 0;
  for (size_t i = 0; i < programs.size(); ++i) {
    PerfOptions slow;
    slow.fast_forward = false;
    const PerfRun a = run_perf(config, programs[i]);
    const PerfRun b = run_perf(config, programs[i], slow);
    std::map<std::string, uint64_t> ca = a.counters, cb = b.counters;
    stepped += ca.at("sim_stepped_cycles");
    cycles += ca.at("cycles");
    ca.erase("sim_stepped_cycles");
    cb.erase("sim_stepped_cycles");
    EXPECT_EQ(ca, cb) << "program " << i;
    ASSERT_EQ(a.slices.size(), b.slices.size()) << "program " << i;
    for (size_t k = 0; k < a.slices.size(); ++k) {
      const InsnSlice &x = a.slices[k], &y = b.slices[k];
      EXPECT_TRUE(x.track == y.track && x.index == y.index && x.start == y.start && x.end == y.end)
          << "program " << i << ": insn " << x.index << " track " << x.track << " starts "
          << x.start << " / " << y.start << ", ends " << x.end << " / " << y.end;
    }
  }
  // The point of fast-forward: most cycles are not evaluated one by one.
  EXPECT_LT(stepped, cycles) << "fast-forward jumped over nothing";
}

TEST_P(PerfSimTest, TimingOnlyCountsTheSameAndMovesNoData) {
  const isa::HwConfig config = config_named(GetParam());
  for (uint64_t seed = 200; seed < 220; ++seed) {
    const isa::Program p = progen::generate_program(config, seed);
    PerfOptions o;
    o.timing_only = true;
    const PerfRun full = run_perf(config, p), timing = run_perf(config, p, o);
    EXPECT_EQ(full.counters, timing.counters) << "seed " << seed;
    EXPECT_EQ(timing.dram, p.dram) << "seed " << seed << ": a timing-only run wrote data";
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, PerfSimTest,
                         ::testing::Values("default", "small", "wide", "configs/b8x16_bus128.yaml",
                                           "configs/batch2.yaml", "configs/small_hold.yaml"),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return std::filesystem::path(info.param).stem().string();
                         });

// extensions.alu_hold: an ALU whose micro-ops share one vector operand (one micro-op, src factors
// 0) reads it once and issues every cycle after its first micro-op; one whose src moves does
// not. The same results either way (and the RTL's cycles: perf_equals_rtl_test).
TEST(PerfSim, HeldVectorOperandIssuesEveryCycle) {
  const isa::HwConfig plain = config_named("small"), hold = config_named("configs/small_hold.yaml");
  auto program = [](const isa::HwConfig &c, const char *src_factors) {
    return isa::assemble(c,
                         fmt::format(".region a input acc 80 random 1\n"
                                     ".region c output out 64\n"
                                     ".uop dst=16 src=0 wgt=0\n"
                                     "load.uop sram=0 dram=@uops x=1\n"
                                     "load.acc sram=0 dram=a x=80\n"
                                     "alu.add uops=0:1 loop=1,64 dst=0,1 src={} push_next\n"
                                     "store.out sram=16 dram=c x=64 stride=64 pop_prev\n"
                                     "finish\n",
                                     src_factors),
                         "held.s");
  };
  for (const char *src : {"0,0", "0,1"}) {
    SCOPED_TRACE(src);
    const PerfRun a = run_perf(plain, program(plain, src)), b = run_perf(hold, program(hold, src));
    EXPECT_EQ(a.dram, b.dram);
    const uint64_t saved = a.counters.at("cycles") - b.counters.at("cycles");
    if (std::string(src) == "0,0")
      EXPECT_EQ(saved, 63u) << "64 micro-ops: 2 cycles each, or 1 after the first with the hold";
    else
      EXPECT_EQ(saved, 0u) << "a moving src is read for every micro-op";
  }
}

// A whole conv layer (long GEMM and ALU streams, bursts streaming in and out) as well.
TEST(PerfSim, FastForwardChangesNothingOnAConvLayer) {
  const isa::HwConfig config = config_named("small");
  for (const bench::ConvLayerSpec &layer : bench::resnet18_convs()) {
    if (layer.name != "C11") continue;
    driver::Counters counters[2];
    std::vector<InsnSlice> slices[2];
    for (int slow = 0; slow < 2; ++slow) {
      PerfOptions o;
      o.record_slices = true;
      o.fast_forward = slow == 0;
      driver::PerfDevice device(config, o);
      bench::LayerBenchOptions lo;
      lo.device = &device;
      const bench::LayerResult r = bench::run_conv_layer(config, layer, lo);
      EXPECT_EQ(r.mismatches, 0u);
      counters[slow] = r.counters;
      counters[slow].erase("sim_stepped_cycles");
      slices[slow] = device.sim().slices();
    }
    EXPECT_EQ(counters[0], counters[1]);
    ASSERT_EQ(slices[0].size(), slices[1].size());
    for (size_t k = 0; k < slices[0].size(); ++k)
      EXPECT_TRUE(slices[0][k].start == slices[1][k].start && slices[0][k].end == slices[1][k].end)
          << "insn " << slices[0][k].index << " on track " << slices[0][k].track;
  }
}

TEST(PerfSim, TimelineHasTheRtlFormat) {
  const isa::HwConfig config = config_named("small");
  const isa::Program p = progen::generate_program(config, 7);
  const std::string path = ::testing::TempDir() + "perf_sim_timeline.json";
  PerfOptions o;
  o.timeline_path = path;
  const PerfRun r = run_perf(config, p, o);
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  const nlohmann::json doc = nlohmann::json::parse(in);
  in.close();
  std::filesystem::remove(path);
  std::vector<std::string> tracks;
  std::string process;
  size_t slices = 0;
  const double us_per_cycle = 1.0 / config.clock_mhz;
  for (const auto &ev : doc.at("traceEvents")) {
    if (ev.at("name") == "thread_name") tracks.push_back(ev.at("args").at("name"));
    if (ev.at("name") == "process_name") process = ev.at("args").at("name");
    if (ev.at("ph") != "X") continue;
    ++slices;
    const uint64_t start = ev.at("args").at("start_cycle"), end = ev.at("args").at("end_cycle");
    EXPECT_LE(start, end);
    EXPECT_NEAR(ev.at("ts").get<double>(), start * us_per_cycle, 1e-9);
    EXPECT_NEAR(ev.at("dur").get<double>(), (end - start) * us_per_cycle, 1e-9);
    const uint32_t index = ev.at("args").at("index");
    ASSERT_LT(index, p.insn_count);
  }
  EXPECT_EQ(process, "vacc accelerator (perf)");
  EXPECT_EQ(tracks, (std::vector<std::string>{"load", "compute", "store", "compute: GEMM",
                                              "compute: ALU"}));
  EXPECT_EQ(slices, r.slices.size());
  // Every instruction ran on its engine's track, GEMMs and ALUs on their unit's too.
  EXPECT_GT(slices, p.insn_count);
}

TEST(PerfSim, CycleLimitIsADeadlockReport) {
  const isa::HwConfig config = config_named("small");
  const isa::Program p = progen::make_gemm_stream(config, 8, 64);
  PerfOptions o;
  o.cycle_limit = 100;
  PerfSim perf(config, o);
  std::vector<uint8_t> dram = p.dram;
  try {
    perf.run(dram, p.insn_offset, p.insn_count);
    FAIL() << "a run past its cycle limit must fail";
  } catch (const Error &e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("did not finish within the cycle limit of 100 cycles"), std::string::npos)
        << m;
    EXPECT_NE(m.find("compute engine at instruction"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace vacc::sim
