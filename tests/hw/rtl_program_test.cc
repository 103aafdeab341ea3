// hw/'s own end-to-end check of vacc_top on the small config: programs assembled from text run
// on the verilated RTL (the simulator's harness, top_harness.h) and on fsim, and device memory
// after the run must be identical byte for byte. Also: the illegal-instruction and cycle-limit
// (deadlock) paths end the run with the right error bits, and a long GEMM stream keeps the
// GEMM core busy at least 95% of the compute engine's busy cycles. Random programs on two
// cores with two int8 products per DSP multiplier (gemm.dsp_packing) match fsim, in the same
// cycles as unpacked; so do they on a core whose ALU holds a shared vector operand
// (extensions.alu_hold), in fewer cycles where it holds one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "Vvacc_top_batch_packed.h"
#include "Vvacc_top_bus256.h"
#include "Vvacc_top_small.h"
#include "Vvacc_top_small_hold.h"
#include "Vvacc_top_small_packed.h"
#include "top_harness.h"
#include "vacc/isa/assembly.h"
#include "vacc/isa/config.h"
#include "vacc/isa/program.h"
#include "vacc/progen/progen.h"
#include "vacc/simulator/fsim.h"

namespace vacc::test {
namespace {

constexpr uint64_t kBase = 0x10000;

isa::HwConfig small_config() { return isa::load_config(VACC_TEST_CONFIG_DIR "/small.yaml"); }
isa::HwConfig bus256_config() { return isa::load_config(VACC_TEST_HW_CONFIG_DIR "/small_bus256.yaml"); }
isa::HwConfig hw_test_config(const char *name) {
  return isa::load_config(std::string(VACC_TEST_HW_CONFIG_DIR "/") + name + ".yaml");
}

struct RtlRun {
  HarnessResult result;
  std::vector<uint8_t> dram;
};

template <typename Top = Vvacc_top_small>
RtlRun run_rtl(const isa::Program &p, uint32_t cycle_limit = 2000000, int latency = 32) {
  TopHarness<Top> h(kBase + p.dram.size() + 4096, latency);
  std::copy(p.dram.begin(), p.dram.end(), h.mem.begin() + kBase);
  RtlRun run;
  run.result = h.run(kBase, p.insn_offset, p.insn_count, cycle_limit, 4000000);
  run.dram.assign(h.mem.begin() + kBase, h.mem.begin() + kBase + p.dram.size());
  return run;
}

template <typename Top>
void expect_same_as_fsim_on(const isa::HwConfig &config, const std::string &text) {
  const isa::Program p = isa::assemble(config, text, "test.s");
  std::vector<uint8_t> expected = p.dram;
  sim::Fsim fsim(config);
  fsim.run(expected, p.insn_offset, p.insn_count);
  // The program must have written something, or equality would prove nothing.
  size_t changed = 0;
  for (size_t i = 0; i < expected.size(); ++i) changed += expected[i] != p.dram[i];
  ASSERT_GT(changed, expected.size() / 50) << "the program barely writes its outputs";
  for (int latency : {1, 32}) {
    const RtlRun run = run_rtl<Top>(p, 2000000, latency);
    ASSERT_EQ(run.result.error_status, 0u) << "latency " << latency;
    ASSERT_EQ(run.dram.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(int{run.dram[i]}, int{expected[i]})
          << "first difference at byte " << i << " (latency " << latency << ")";
    }
  }
}

// Runs on the small config (64-bit bus) and on its 256-bit-bus twin (lane packing).
void expect_same_as_fsim(const std::string &text) {
  {
    SCOPED_TRACE("small");
    expect_same_as_fsim_on<Vvacc_top_small>(small_config(), text);
  }
  {
    SCOPED_TRACE("small_bus256");
    expect_same_as_fsim_on<Vvacc_top_bus256>(bus256_config(), text);
  }
}

// Padded 2D loads, a GEMM reduction over two micro-ops with both loop levels, ALU
// requantization, and a strided 2D store.
TEST(RtlProgram, PaddedGemmReductionAndStridedStore) {
  expect_same_as_fsim(R"(
.region x   input  inp 24 random 1
.region w   weight wgt 4  random 2
.region out output out 80
.uop dst=0 src=0 wgt=0
.uop dst=0 src=1 wgt=1
.uop dst=0 src=0 wgt=0
load.inp  sram=0 dram=x y=4 x=6 stride=6 pad=1,2,1,1
load.wgt  sram=0 dram=w x=4 push_next
load.uop  sram=0 dram=@uops x=3 pop_prev
gemm      uops=0:1 loop=7,7 acc=8,1 inp=0,0 wgt=0,0 reset
gemm      uops=0:2 loop=7,7 acc=8,1 inp=8,1 wgt=0,2
alu.shr   uops=2:3 loop=7,7 dst=8,1 src=8,1 imm=4
alu.max   uops=2:3 loop=7,7 dst=8,1 src=8,1 imm=-128
alu.min   uops=2:3 loop=7,7 dst=8,1 src=8,1 imm=127 push_next
store.out sram=0 dram=out y=7 x=8 stride=10 pop_prev push_prev
finish    pop_next
)");
}

// Every ALU op, vector and immediate, including shifts by large and negative amounts, with
// the full 32-bit results observed through byte-wise stores.
TEST(RtlProgram, AluOpsVectorAndImmediate) {
  std::string text = R"(
.region a   weight acc 16 random 5
.region b   weight acc 16 random 6
.region s   weight acc 16 random 7
.region o0  output out 16
.region o1  output out 16
.region o2  output out 16
.region o3  output out 16
.region o4  output out 16
.uop dst=0 src=16 wgt=0
.uop dst=0 src=32 wgt=0
.uop dst=0 src=0 wgt=0
load.uop  sram=0 dram=@uops x=3
load.acc  sram=0 dram=a x=16
load.acc  sram=16 dram=b x=16
load.acc  sram=32 dram=s x=16
alu.mul   uops=0:1 loop=2,8 dst=8,1 src=8,1
alu.add   uops=0:1 loop=1,16 dst=0,1 src=0,1
alu.max   uops=0:1 loop=16,1 dst=1,0 src=1,0
alu.shr   uops=1:2 loop=1,16 dst=0,1 src=0,1
alu.shr   uops=2:3 loop=1,16 dst=0,1 src=0,0 imm=-3
alu.min   uops=0:1 loop=1,16 dst=0,1 src=0,1
alu.add   uops=2:3 loop=1,16 dst=0,1 src=0,0 imm=-30000
alu.shr   uops=2:3 loop=1,16 dst=0,1 src=0,0 imm=100
alu.shr   uops=2:3 loop=1,16 dst=0,1 src=0,0 imm=-100 push_next
store.out sram=0 dram=o0 x=16 pop_prev push_prev
alu.shr   uops=2:3 loop=1,16 dst=0,1 src=0,0 imm=8 pop_next push_next
store.out sram=0 dram=o1 x=16 pop_prev push_prev
alu.shr   uops=2:3 loop=1,16 dst=0,1 src=0,0 imm=8 pop_next push_next
store.out sram=0 dram=o2 x=16 pop_prev push_prev
alu.shr   uops=2:3 loop=1,16 dst=0,1 src=0,0 imm=8 pop_next push_next
store.out sram=0 dram=o3 x=16 pop_prev push_prev
alu.mul   uops=2:3 loop=1,16 dst=0,1 src=0,0 imm=-7 pop_next push_next
store.out sram=16 dram=o4 x=16 pop_prev push_prev
finish    pop_next
)";
  expect_same_as_fsim(text);
}

TEST(RtlProgram, IllegalInstructionEndsTheRun) {
  const isa::HwConfig config = small_config();
  isa::Program p = isa::assemble(config, R"(
.region x   input  inp 4 random 1
load.inp  sram=0 dram=x x=4
load.inp  sram=4 dram=x x=4
load.inp  sram=8 dram=x x=4
finish
)", "illegal.s");
  // Instruction 2: opcode 7 does not exist.
  p.dram[p.insn_offset + 2 * 16] |= 0x7;
  RtlRun run = run_rtl(p);
  EXPECT_TRUE(run.result.control & 2);
  EXPECT_EQ(run.result.error_status, 1u);
  EXPECT_EQ(run.result.error_insn, 2u);

  // Instruction 1: a load of INP that pops from the (absent) previous engine.
  isa::Program q = isa::assemble(config, R"(
.region x   input  inp 4 random 1
load.inp  sram=0 dram=x x=4
load.inp  sram=4 dram=x x=4
finish
)", "illegal_flag.s");
  q.dram[q.insn_offset + 16] |= 1 << 3;  // pop_prev
  run = run_rtl(q);
  EXPECT_EQ(run.result.error_status, 1u);
  EXPECT_EQ(run.result.error_insn, 1u);
}

TEST(RtlProgram, CycleLimitEndsADeadlock) {
  const isa::HwConfig config = small_config();
  const isa::Program p = isa::assemble(config, R"(
.uop dst=0 src=0 wgt=0
load.uop  sram=0 dram=@uops x=1
gemm      uops=0:1 loop=1,1 acc=0,0 inp=0,0 wgt=0,0 pop_prev
finish
)", "deadlock.s");
  const RtlRun run = run_rtl(p, 5000);
  EXPECT_TRUE(run.result.control & 2);
  EXPECT_EQ(run.result.error_status, 2u);
  EXPECT_EQ(run.result.cycles, 5000u);
}

TEST(RtlProgram, LongGemmStreamKeepsTheCoreBusy) {
  const isa::HwConfig config = small_config();
  std::string text = R"(
.region x   input  inp 64 random 1
.region w   weight wgt 8  random 2
.uop dst=0 src=0 wgt=0
.uop dst=1 src=1 wgt=1
.uop dst=2 src=2 wgt=2
.uop dst=3 src=3 wgt=3
load.inp  sram=0 dram=x x=64
load.wgt  sram=0 dram=w x=8 push_next
load.uop  sram=0 dram=@uops x=4 pop_prev
)";
  for (int k = 0; k < 16; ++k) text += "gemm uops=0:4 loop=8,16 acc=4,0 inp=4,0 wgt=0,0\n";
  text += "finish\n";
  const isa::Program p = isa::assemble(config, text, "gemm_stream.s");
  const RtlRun run = run_rtl(p);
  ASSERT_EQ(run.result.error_status, 0u);
  const uint32_t uops = 16 * 8 * 16 * 4;
  EXPECT_EQ(run.result.gemm_busy, uops);
  const double busy = static_cast<double>(run.result.gemm_busy) / run.result.counters[2];
  RecordProperty("gemm_busy_fraction", std::to_string(busy));
  std::printf("GEMM micro-ops %u, compute busy cycles %u, total cycles %llu: %.1f%% busy\n",
              run.result.gemm_busy, run.result.counters[2],
              static_cast<unsigned long long>(run.result.cycles), 100.0 * busy);
  EXPECT_GE(busy, 0.95);
}

// Random programs (progen, as `vacc fuzz-cosim`) on the packed cores: device memory equal to
// fsim's. small_packed has small's ISA, so every program also runs on the unpacked small RTL:
// packing keeps the GEMM pipeline's depth, so cycles and every counter must be equal too.
TEST(RtlProgram, PackedCoresMatchFsimInTheUnpackedCycles) {
  const isa::HwConfig small = small_config();
  const isa::HwConfig small_packed = hw_test_config("small_packed");
  ASSERT_EQ(small.isa_fingerprint(), small_packed.isa_fingerprint());
  const isa::HwConfig batch_packed = hw_test_config("batch_packed");
  for (uint64_t seed = 0; seed < 40; ++seed) {
    {
      SCOPED_TRACE(progen::describe_program(small_packed, seed));
      const isa::Program p = progen::generate_program(small_packed, seed);
      std::vector<uint8_t> expected = p.dram;
      sim::Fsim(small_packed).run(expected, p.insn_offset, p.insn_count);
      const RtlRun packed = run_rtl<Vvacc_top_small_packed>(p);
      const RtlRun unpacked = run_rtl<Vvacc_top_small>(p);
      ASSERT_EQ(packed.result.error_status, 0u);
      ASSERT_EQ(packed.dram, expected) << "the packed core differs from fsim";
      EXPECT_EQ(packed.result.cycles, unpacked.result.cycles);
      for (int i = 0; i < 7; ++i)
        EXPECT_EQ(packed.result.counters[i], unpacked.result.counters[i]) << "counter " << i;
      EXPECT_EQ(packed.result.gemm_busy, unpacked.result.gemm_busy);
    }
    {
      SCOPED_TRACE(progen::describe_program(batch_packed, seed));
      const isa::Program p = progen::generate_program(batch_packed, seed);
      std::vector<uint8_t> expected = p.dram;
      sim::Fsim(batch_packed).run(expected, p.insn_offset, p.insn_count);
      const RtlRun packed = run_rtl<Vvacc_top_batch_packed>(p);
      ASSERT_EQ(packed.result.error_status, 0u);
      ASSERT_EQ(packed.dram, expected) << "the packed core differs from fsim";
    }
  }
}

// extensions.alu_hold, with the RTL's assertions on: random programs (progen gives the held
// form often, sometimes with src among the indices the ALU writes) equal fsim; a held operand
// that the ALU itself rewrites is seen rewritten by the micro-ops after; holding saves one cycle
// per micro-op after the first.
TEST(RtlProgram, HeldOperandMatchesFsimInFewerCycles) {
  const isa::HwConfig hold = hw_test_config("small_hold");
  ASSERT_TRUE(hold.alu_hold);
  for (uint64_t seed = 0; seed < 100; ++seed) {
    SCOPED_TRACE(progen::describe_program(hold, seed));
    const isa::Program p = progen::generate_program(hold, seed);
    std::vector<uint8_t> expected = p.dram;
    sim::Fsim(hold).run(expected, p.insn_offset, p.insn_count);
    const RtlRun run = run_rtl<Vvacc_top_small_hold>(p);
    ASSERT_EQ(run.result.error_status, 0u);
    ASSERT_EQ(run.dram, expected);
  }
  // src index 5 is also the dst of the sixth iteration: the iterations after it add the value
  // it wrote, as fsim's one-at-a-time order has it.
  const isa::Program p = isa::assemble(hold, R"(
.region a   weight acc 32 random 5
.region o   output out 32
.uop dst=0 src=5 wgt=0
load.uop  sram=0 dram=@uops x=1
load.acc  sram=0 dram=a x=32
alu.add   uops=0:1 loop=1,32 dst=0,1 src=0,0 push_next
store.out sram=0 dram=o x=32 pop_prev push_prev
finish    pop_next
)",
                                       "held.s");
  std::vector<uint8_t> expected = p.dram;
  sim::Fsim(hold).run(expected, p.insn_offset, p.insn_count);
  const RtlRun held = run_rtl<Vvacc_top_small_hold>(p), plain = run_rtl<Vvacc_top_small>(p);
  ASSERT_EQ(held.result.error_status, 0u);
  EXPECT_EQ(held.dram, expected);
  EXPECT_EQ(plain.dram, expected);
  EXPECT_EQ(plain.result.cycles - held.result.cycles, 31u)
      << "32 micro-ops: every second cycle, or every cycle after the first";
}

}  // namespace
}  // namespace vacc::test
