// Performance properties of the accelerator RTL, measured with its own counters: tokens let
// load, compute and store overlap (a double-buffered pipeline beats its serialized twin), a
// GEMM stream on resident operands keeps the GEMM core busy (counter 0x48) >= 95% of the
// compute engine's busy window, and GEMM and ALU instructions with the overlap flag on
// different ACC banks run side by side (isa/README.md, "Overlap"), with fsim's results.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "vacc/isa/assembly.h"
#include "vacc/isa/config.h"
#include "vacc/isa/insn.h"
#include "vacc/progen/workloads.h"
#include "vacc/simulator/cosim.h"
#include "vacc/simulator/rtl_sim.h"

namespace vacc::sim {
namespace {

isa::HwConfig config_named(const std::string &name) {
  return isa::load_config(isa::resolve_config_path(name));
}

// An overlap program (isa/README.md, "Overlap"): INP/WGT loads, micro-ops
//   0: acc 0 (bank 0), 1: acc hi (bank 1), 2: dst = src = hi (bank 1), 3: dst = src = 0 (bank 0)
// with hi = ACC depth / 2, ACC tiles 0..63 and hi..hi+63 set by unflagged GEMMs, then
// `computes` ("{ov}": " overlap" if `flag`), which push two tokens to the store engine, then
// two stores that pop one each: tiles 0..63 into c0 and hi..hi+63 into c1, bank 1 first if
// `bank1_first`. A flagged push vouches for its own bank only, so each store pops the token
// of the instruction that covers its bank.
std::string overlap_program(const isa::HwConfig &config, const std::string &computes, bool flag,
                            bool bank1_first) {
  const int hi = config.acc_depth() / 2;
  const std::string c0 = "store.out sram=0 dram=c0 x=64 pop_prev\n";
  const std::string c1 = fmt::format("store.out sram={} dram=c1 x=64 pop_prev\n", hi);
  return fmt::format(R"(
.region a   input  inp 64 random 1
.region w   weight wgt 16 random 2
.region c0  output out 64
.region c1  output out 64
.uop dst=0 src=0 wgt=0
.uop dst={hi} src=0 wgt=0
.uop dst={hi} src={hi} wgt=0
.uop dst=0 src=0 wgt=0
load.uop  sram=0 dram=@uops x=4
load.inp  sram=0 dram=a x=64
load.wgt  sram=0 dram=w x=16 push_next
gemm uops=0:1 loop=1,64 acc=0,1 inp=0,1 wgt=0,0 reset pop_prev
gemm uops=1:2 loop=1,64 acc=0,1 inp=0,1 wgt=0,0 reset
gemm uops=1:2 loop=1,64 acc=0,1 inp=0,1 wgt=3,0
)",
                     fmt::arg("hi", hi)) +
         fmt::format(fmt::runtime(computes), fmt::arg("ov", flag ? " overlap" : "")) +
         (bank1_first ? c1 + c0 : c0 + c1) + "finish\n";
}

// N = 1024 GEMM micro-ops on bank 0 (one per cycle), then M = 4 x 64 ALU micro-ops on bank 1
// (three with an immediate, one per cycle; the add, one per two cycles: 320 cycles). The last
// ALU's token covers bank 1, a short GEMM's bank 0.
constexpr char kGemmThenAlus[] = R"(gemm uops=0:1 loop=16,64 acc=0,1 inp=0,1 wgt=1,0{ov}
alu.shr uops=2:3 loop=1,64 dst=0,1 src=0,1 imm=2{ov}
alu.max uops=2:3 loop=1,64 dst=0,1 src=0,1 imm=-3000{ov}
alu.add uops=2:3 loop=1,64 dst=0,1 src=0,1{ov}
alu.min uops=2:3 loop=1,64 dst=0,1 src=0,1 imm=3000{ov} push_next
gemm uops=0:1 loop=1,1 acc=0,0 inp=0,0 wgt=2,0{ov} push_next
)";

// An ALU of 256 micro-ops with a vector operand on bank 1 (512 cycles), then a GEMM of 512
// micro-ops on bank 0.
constexpr char kAluThenGemm[] = R"(alu.add uops=2:3 loop=4,64 dst=0,1 src=0,1{ov}
gemm uops=0:1 loop=8,64 acc=0,1 inp=0,1 wgt=1,0{ov} push_next
alu.max uops=2:3 loop=1,1 dst=0,0 src=0,0 imm=-3000{ov} push_next
)";

// As kGemmThenAlus, but the ALUs work on the GEMM's bank 0.
constexpr char kGemmThenAlusOnItsBank[] = R"(gemm uops=0:1 loop=16,64 acc=0,1 inp=0,1 wgt=1,0{ov}
alu.shr uops=3:4 loop=1,64 dst=0,1 src=0,1 imm=2{ov}
alu.max uops=3:4 loop=1,64 dst=0,1 src=0,1 imm=-3000{ov}
alu.add uops=3:4 loop=1,64 dst=0,1 src=0,1{ov}
alu.min uops=3:4 loop=1,64 dst=0,1 src=0,1 imm=3000{ov} push_next
gemm uops=1:2 loop=1,1 acc=0,0 inp=0,0 wgt=2,0{ov} push_next
)";

// overlap_program's first instruction after its frame (loads and ACC set-up).
constexpr uint32_t kFirstCompute = 6;

struct OverlapRun {
  uint64_t compute_busy = 0;
  uint64_t window = 0;           // cycles from the first unit start of `computes` to the last end
  InsnSlice gemm;                // the longest GEMM, on the GEMM unit's track
  std::vector<InsnSlice> alus;   // the ALU unit's track
  std::vector<InsnSlice> stores; // the store engine's track
};

// Runs the program on the RTL and fsim (results must match), with a timeline for the slices
// (whose file must name the units' tracks).
OverlapRun run_overlap(const isa::HwConfig &config, const std::string &text,
                       const std::string &label) {
  // One file per program: ctest runs the tests in parallel processes.
  std::string file = label;
  std::replace(file.begin(), file.end(), ' ', '_');
  const std::string timeline = ::testing::TempDir() + "rtl_overlap_" + file + ".json";
  RtlOptions options;
  options.timeline_path = timeline;
  RtlSim rtl(config, options);
  const CosimOutcome o = cosim_program(config, rtl, isa::assemble(config, text, label), label);
  EXPECT_TRUE(o.ok) << o.message;
  std::ifstream in(timeline);
  const nlohmann::json doc = nlohmann::json::parse(in);
  in.close();
  std::filesystem::remove(timeline);
  std::vector<std::string> tracks;
  for (const auto &ev : doc.at("traceEvents"))
    if (ev.at("name") == "thread_name") tracks.push_back(ev.at("args").at("name"));
  for (const char *unit : {"compute: GEMM", "compute: ALU"})
    EXPECT_NE(std::find(tracks.begin(), tracks.end(), unit), tracks.end()) << unit;
  OverlapRun r;
  r.compute_busy = rtl.counters().at("compute_busy");
  uint64_t first = UINT64_MAX, last = 0;
  for (const InsnSlice &s : rtl.slices()) {
    if ((s.track == kGemmUnitTrack || s.track == kAluUnitTrack) && s.index >= kFirstCompute) {
      first = std::min(first, s.start);
      last = std::max(last, s.end);
    }
    if (s.track == kGemmUnitTrack && s.end - s.start > r.gemm.end - r.gemm.start) r.gemm = s;
    if (s.track == kAluUnitTrack) r.alus.push_back(s);
    if (s.track == static_cast<int>(isa::Engine::kStore)) r.stores.push_back(s);
  }
  r.window = last > first ? last - first : 0;
  return r;
}

bool inside(const InsnSlice &inner, const InsnSlice &outer) {
  return inner.start >= outer.start && inner.end <= outer.end;
}

TEST(RtlPerf, DoubleBufferedPipelineBeatsItsSerializedTwin) {
  const isa::HwConfig config = config_named("default");
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for default";
  RtlSim rtl(config);
  const CosimOutcome serial = cosim_program(
      config, rtl, progen::make_pipeline_program(config, 8, 8, false, 4), "serialized pipeline");
  ASSERT_TRUE(serial.ok) << serial.message;
  const CosimOutcome overlapped = cosim_program(
      config, rtl, progen::make_pipeline_program(config, 8, 8, true, 4), "double-buffered pipeline");
  ASSERT_TRUE(overlapped.ok) << overlapped.message;
  EXPECT_LT(static_cast<double>(overlapped.rtl_cycles), 0.8 * static_cast<double>(serial.rtl_cycles))
      << "double-buffered " << overlapped.rtl_cycles << " vs serialized " << serial.rtl_cycles;
}

TEST(RtlPerf, GemmStreamKeepsTheGemmCoreBusy) {
  const isa::HwConfig config = config_named("default");
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for default";
  RtlSim rtl(config);
  const CosimOutcome o =
      cosim_program(config, rtl, progen::make_gemm_stream(config, 64, 256), "gemm stream");
  ASSERT_TRUE(o.ok) << o.message;
  const auto c = rtl.counters();
  ASSERT_GT(c.at("compute_busy"), 0u);
  const double busy = static_cast<double>(c.at("gemm_busy")) / static_cast<double>(c.at("compute_busy"));
  EXPECT_GE(busy, 0.95) << "gemm_busy " << c.at("gemm_busy") << " compute_busy "
                        << c.at("compute_busy");
  // 64 GEMMs of 256 micro-op steps: the core cannot be busy for fewer cycles than that.
  EXPECT_GE(c.at("gemm_busy"), 64u * 256u);
}

// Flagged, the ALUs run while the GEMM does, and so does the store of their bank (their token
// vouches for bank 1 only): the compute engine is busy about N cycles for both. Unflagged (the
// twin), each ALU waits for the GEMM: about N + M.
TEST(RtlPerf, FlaggedAlusRunBesideALongGemmOnTheOtherBank) {
  const isa::HwConfig config = config_named("default");
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for default";
  constexpr uint64_t kGemmCycles = 16 * 64, kAluCycles = 3 * 64 + 64 * 2;
  const OverlapRun side = run_overlap(config, overlap_program(config, kGemmThenAlus, true, true),
                                      "flagged GEMM then ALUs");
  const OverlapRun serial = run_overlap(
      config, overlap_program(config, kGemmThenAlus, false, true), "unflagged GEMM then ALUs");
  ASSERT_EQ(side.alus.size(), 4u);
  ASSERT_EQ(serial.alus.size(), 4u);
  ASSERT_EQ(side.stores.size(), 2u);
  EXPECT_GE(side.gemm.end - side.gemm.start, kGemmCycles);
  for (const InsnSlice &a : side.alus) EXPECT_TRUE(inside(a, side.gemm)) << a.index;
  EXPECT_LT(side.stores[0].start, side.gemm.end);
  for (const InsnSlice &a : serial.alus) EXPECT_GE(a.start, serial.gemm.end) << a.index;
  // About max(N, M) against N + M (measured: 1031 and 1360 cycles); the busy counter agrees.
  EXPECT_LE(side.window, std::max(kGemmCycles, kAluCycles) + 32);
  EXPECT_GE(serial.window, kGemmCycles + kAluCycles);
  EXPECT_GE(serial.compute_busy, side.compute_busy + kAluCycles - 16)
      << "flagged " << side.compute_busy << " unflagged " << serial.compute_busy;
}

// A flagged GEMM (512 micro-ops on bank 0) starts while an ALU (512 cycles on bank 1) runs.
TEST(RtlPerf, FlaggedGemmStartsBesideARunningAlu) {
  const isa::HwConfig config = config_named("default");
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for default";
  const OverlapRun side = run_overlap(config, overlap_program(config, kAluThenGemm, true, false),
                                      "flagged ALU then GEMM");
  const OverlapRun serial = run_overlap(
      config, overlap_program(config, kAluThenGemm, false, false), "unflagged ALU then GEMM");
  ASSERT_EQ(side.alus.size(), 2u);
  ASSERT_EQ(serial.alus.size(), 2u);
  EXPECT_LT(side.gemm.start, side.alus[0].end);
  EXPECT_GE(serial.gemm.start, serial.alus[0].end);
  // About max(N, M) = 512 against N + M = 1024 (measured: 526 and 1037 cycles).
  EXPECT_LE(side.window, 512u + 32);
  EXPECT_GE(serial.window, 1024u);
}

// An ALU micro-op with an immediate reads ACC once (dst), so the unit issues one per cycle;
// with a vector operand it reads twice (src, dst) and issues one per two cycles.
TEST(RtlPerf, AluIssuesEveryCycleWithAnImmediate) {
  const isa::HwConfig config = config_named("default");
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for default";
  const OverlapRun r = run_overlap(config,
                                   overlap_program(config,
                                                   "alu.shr uops=2:3 loop=4,64 dst=0,1 src=0,1 "
                                                   "imm=1\n"
                                                   "alu.add uops=2:3 loop=4,64 dst=0,1 src=0,1 "
                                                   "push_next\n"
                                                   "gemm uops=0:1 loop=1,1 acc=0,0 inp=0,0 "
                                                   "wgt=2,0 push_next\n",
                                                   false, true),
                                   "immediate and vector ALUs");
  ASSERT_EQ(r.alus.size(), 2u);
  const uint64_t imm = r.alus[0].end - r.alus[0].start, vec = r.alus[1].end - r.alus[1].start;
  EXPECT_GE(imm, 256u);
  EXPECT_LE(imm, 256u + 8) << "an immediate ALU of 256 micro-ops";
  EXPECT_GE(vec, 512u);
  EXPECT_LE(vec, 512u + 8) << "a vector ALU of 256 micro-ops";
}

// Flagged ALUs on the GEMM's own bank: the hardware keeps them behind the GEMM (each waits
// until the GEMM unit has no work left on that bank), so the results stay fsim's.
TEST(RtlPerf, FlaggedAlusOnTheGemmsBankWaitForIt) {
  const isa::HwConfig config = config_named("default");
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for default";
  const OverlapRun r = run_overlap(
      config, overlap_program(config, kGemmThenAlusOnItsBank, true, false),
      "flagged GEMM then ALUs on its bank");
  ASSERT_EQ(r.alus.size(), 4u);
  for (const InsnSlice &a : r.alus) EXPECT_GE(a.start, r.gemm.end) << a.index;
}

}  // namespace
}  // namespace vacc::sim
