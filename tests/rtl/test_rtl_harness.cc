// The rtl simulator's harness (SystemC host, AXI4-Lite register protocol, AXI4 memory model,
// cycle limit, waveform, timeline) on the test-only stand-in RTL, which copies `insn_count`
// bus words from base + insn_offset to right after them. The reference is a plain memcpy.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "../expect_error.h"
#include "rtl_model.h"
#include "vacc/isa/registers.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/support/error.h"

namespace vacc::sim {
ModelEntry VACC_STANDIN_ENTRY();  // the stand-in's entry (simulator/rtl/CMakeLists.txt)

namespace {
namespace reg = isa::reg;

isa::HwConfig standin_config(int bytes_per_cycle = 8, int latency = 20) {
  isa::HwConfig c;
  c.name = "standin";
  c.bus_bits = 64;
  c.mem_latency_cycles = latency;
  c.mem_bytes_per_cycle = bytes_per_cycle;
  return c;
}

RtlOptions standin_options() {
  static bool registered = [] {
    add_model_entry(VACC_STANDIN_ENTRY());
    return true;
  }();
  (void)registered;
  RtlOptions o;
  o.model = "standin";
  return o;
}

struct Copy {
  std::vector<uint8_t> before, after;
  uint64_t cycles = 0;
};

Copy run_copy(RtlSim &sim, uint32_t words, uint64_t offset, uint32_t seed) {
  Copy c;
  c.before.resize(64 * 1024);
  std::mt19937 rng(seed);
  for (auto &b : c.before) b = static_cast<uint8_t>(rng());
  c.after = c.before;
  sim.run(c.after, offset, words);
  c.cycles = sim.counters().at("cycles");
  return c;
}

TEST(RtlHarness, HostProtocolAndMemoryCopyMatchMemcpy) {
  RtlSim sim(standin_config(), standin_options());
  EXPECT_TRUE(sim.model_is_standin());
  const uint32_t words = 100;
  const uint64_t offset = 4096;
  Copy c = run_copy(sim, words, offset, 1);
  std::vector<uint8_t> expect = c.before;
  std::copy(expect.begin() + offset, expect.begin() + offset + words * 8,
            expect.begin() + offset + words * 8);
  ASSERT_EQ(c.after.size(), expect.size());
  for (size_t i = 0; i < expect.size(); ++i) ASSERT_EQ(c.after[i], expect[i]) << "byte " << i;
  // 7 bursts of <= 16 beats, each paying the read and the write latency at least.
  EXPECT_GE(c.cycles, 7u * 2u * 20u + 2u * words);
  EXPECT_LT(c.cycles, 7u * 2u * 20u + 2u * words + 7u * 20u);
  const auto counters = sim.counters();
  EXPECT_EQ(counters.at("dram_read_bytes"), words * 8);
  EXPECT_EQ(counters.at("dram_write_bytes"), words * 8);
  EXPECT_EQ(counters.at("dram_read_bursts"), 7u);
  EXPECT_GT(counters.at("load_busy"), 0u);
  EXPECT_GT(counters.at("store_busy"), 0u);
}

TEST(RtlHarness, RegistersReadBackAndDoneClearsOnRead) {
  RtlSim sim(standin_config(), standin_options());
  sim.allocate(4096);
  sim.write_register(reg::kInsnCount, 3);
  sim.write_register(reg::kInsnOffset, 0x123);
  EXPECT_EQ(sim.read_register(reg::kInsnCount), 3u);
  EXPECT_EQ(sim.read_register(reg::kInsnOffset), 0x123u);
  EXPECT_EQ(sim.read_register(reg::kControl) & reg::kControlIdle, reg::kControlIdle);
  sim.write_register(reg::kInsnOffset, 0);
  sim.write_register(reg::kBaseLow, 0);
  sim.write_register(reg::kBaseHigh, 1);  // the device memory lies at 4 GiB
  sim.write_register(reg::kControl, reg::kControlStart);
  sim.wait();  // consumed the done bit
  EXPECT_EQ(sim.read_register(reg::kControl) & reg::kControlDone, 0u);
  EXPECT_EQ(sim.read_register(reg::kCycleLimit), kDefaultCycleLimit);
}

TEST(RtlHarness, MemoryBandwidthFromTheConfigSetsTheTime) {
  RtlSim fast(standin_config(8), standin_options());
  RtlSim slow(standin_config(2), standin_options());
  const uint64_t f = run_copy(fast, 256, 0, 2).cycles;
  const uint64_t s = run_copy(slow, 256, 0, 2).cycles;
  // 512 beats move 4096 bytes; at 2 bytes/cycle that alone takes 2048 cycles.
  EXPECT_GE(s, 2048u);
  EXPECT_GT(s, f + 1000) << "fast " << f << " slow " << s;
}

TEST(RtlHarness, CycleLimitStopsTheRunWithADeadlockMessage) {
  RtlOptions o = standin_options();
  o.cycle_limit = 300;
  RtlSim sim(standin_config(), o);
  std::vector<uint8_t> dram(64 * 1024, 0);
  try {
    sim.run(dram, 0, 2000);
    FAIL() << "expected a deadlock error";
  } catch (const Error &e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cycle limit of 300 cycles"), std::string::npos) << msg;
  }
  EXPECT_EQ(sim.counters().at("cycles"), 300u);
  // The board is usable again after the error.
  std::vector<uint8_t> small(4096, 7);
  RtlOptions ok = standin_options();
  RtlSim again(standin_config(), ok);
  again.run(small, 0, 4);
  EXPECT_EQ(small[32], 7);
}

TEST(RtlHarness, TimelineHasOneSlicePerBurstOnTheRightTrack) {
  const std::string path = ::testing::TempDir() + "rtl_harness_timeline.json";
  RtlOptions o = standin_options();
  o.timeline_path = path;
  RtlSim sim(standin_config(), o);
  std::vector<uint8_t> dram(16 * 1024, 1);
  sim.run(dram, 0, 40);  // 3 bursts: 16 + 16 + 8 beats
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  const nlohmann::json doc = nlohmann::json::parse(in);
  int per_track[3] = {0, 0, 0};
  for (const auto &ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "X") continue;
    const int tid = ev.at("tid");
    ASSERT_GE(tid, 0);
    ASSERT_LT(tid, 3);
    ++per_track[tid];
    EXPECT_GT(ev.at("dur").get<double>(), 0.0);
  }
  EXPECT_EQ(per_track[0], 3);
  EXPECT_EQ(per_track[1], 0);
  EXPECT_EQ(per_track[2], 3);
  EXPECT_EQ(sim.slices().size(), 6u);
  std::filesystem::remove(path);
}

TEST(RtlHarness, WaveformIsWrittenOnlyWhenAsked) {
  const std::string path = ::testing::TempDir() + "rtl_harness_wave.fst";
  std::filesystem::remove(path);
  {
    RtlOptions o = standin_options();
    o.wave_path = path;
    RtlSim sim(standin_config(), o);
    std::vector<uint8_t> dram(4096, 3);
    sim.run(dram, 0, 8);
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_GT(std::filesystem::file_size(path), 200u);
  std::filesystem::remove(path);
}

TEST(RtlHarness, UnknownModelNameIsAnError) {
  RtlOptions o;
  o.model = "no-such-model";
  EXPECT_ERROR(RtlSim(standin_config(), o), "no-such-model");
}

}  // namespace
}  // namespace vacc::sim
