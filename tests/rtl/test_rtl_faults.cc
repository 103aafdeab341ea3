// Faults on the accelerator RTL: a program that deadlocks ends at the cycle limit with a
// message naming the waiting engines and instructions (never a hang); an illegal instruction
// raises the error bit and the simulator names its index; so does an instruction whose indices
// reach beyond a scratchpad, as fsim refuses it.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>

#include "vacc/isa/config.h"
#include "vacc/isa/encoding.h"
#include "vacc/isa/program.h"
#include "vacc/isa/registers.h"
#include "vacc/progen/out_of_range.h"
#include "vacc/simulator/cosim.h"
#include "vacc/simulator/fsim.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/support/error.h"

namespace vacc::sim {
namespace {

isa::HwConfig small_config() { return isa::load_config(isa::resolve_config_path("small")); }

// LOAD UOP of the one micro-op at element `uops` of DRAM into UOP entry 0.
isa::MemInsn load_one_uop(uint32_t uops) {
  isa::MemInsn lu;
  lu.opcode = isa::Opcode::kLoad;
  lu.mem = isa::MemId::kUop;
  lu.dram_base = uops;
  lu.y_size = 1;
  lu.x_size = 1;
  lu.x_stride = 1;
  return lu;
}

// load.uop; gemm pop_prev (no load ever pushes: deadlock); store; finish.
isa::Program deadlocking_program(const isa::HwConfig &config) {
  isa::ProgramBuilder b(config);
  b.add_region("out", isa::RegionKind::kOutput, isa::MemId::kOut, 4);
  const uint32_t uops = b.uop_region_base();
  b.add_uop({0, 0, 0});
  b.emit(load_one_uop(uops));
  isa::GemmInsn g;
  g.reset = true;
  g.uop_end = 1;
  g.deps.pop_prev = true;
  b.emit(g);
  b.emit(isa::FinishInsn{});
  return b.finish();
}

// Runs `p` on the RTL and expects it refused as an illegal instruction at `index`: the error
// naming it, and the error registers holding the bit and the index.
void expect_rtl_refuses(const isa::HwConfig &config, const isa::Program &p, uint32_t index) {
  RtlSim sim(config);
  std::vector<uint8_t> dram = p.dram;
  try {
    sim.run(dram, p.insn_offset, p.insn_count);
    FAIL() << "expected an illegal-instruction error";
  } catch (const Error &e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("illegal instruction at index " + std::to_string(index)), std::string::npos)
        << msg;
  }
  EXPECT_EQ(sim.read_register(isa::reg::kErrorStatus) & isa::reg::kErrorIllegalInsn,
            isa::reg::kErrorIllegalInsn);
  EXPECT_EQ(sim.read_register(isa::reg::kErrorInsn), index);
}

TEST(RtlFaults, DeadlockEndsAtTheCycleLimitNamingTheWaitingEngine) {
  const isa::HwConfig config = small_config();
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for small";
  RtlOptions options;
  options.cycle_limit = 5000;
  RtlSim sim(config, options);
  const isa::Program p = deadlocking_program(config);
  std::vector<uint8_t> dram = p.dram;
  try {
    sim.run(dram, p.insn_offset, p.insn_count);
    FAIL() << "expected a deadlock";
  } catch (const Error &e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cycle limit of 5000 cycles"), std::string::npos) << msg;
    EXPECT_NE(msg.find("compute engine at instruction 1 (gemm pop_prev"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("token from load"), std::string::npos) << msg;
  }
  EXPECT_EQ(sim.counters().at("cycles"), 5000u);
}

TEST(RtlFaults, IllegalInstructionIsReportedWithItsIndex) {
  const isa::HwConfig config = small_config();
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for small";
  isa::ProgramBuilder b(config);
  b.add_region("out", isa::RegionKind::kOutput, isa::MemId::kOut, 4);
  for (int i = 0; i < 4; ++i) {
    isa::AluInsn a;  // harmless ALU ops on ACC tile 0 (no micro-ops: empty range)
    b.emit(a);
  }
  b.emit(isa::FinishInsn{});
  isa::Program p = b.finish();
  // Instruction 2 gets opcode 7, which no instruction kind has.
  p.dram[p.insn_offset + 2 * isa::kInsnBytes] |= 0x7;
  expect_rtl_refuses(config, p, 2);
}

// GEMM assign is opcode 5, legal only where the config has extensions.gemm_assign: the fetch
// unit of a core without it refuses the instruction as fsim's decoder does.
TEST(RtlFaults, GemmAssignWithoutItsExtensionIsIllegal) {
  const isa::HwConfig config = small_config();
  ASSERT_FALSE(config.gemm_assign);
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for small";
  isa::ProgramBuilder b(config);
  b.add_region("out", isa::RegionKind::kOutput, isa::MemId::kOut, 4);
  for (int i = 0; i < 3; ++i) b.emit(isa::GemmInsn{});  // no micro-ops: empty range
  b.emit(isa::FinishInsn{});
  isa::Program p = b.finish();
  uint8_t &op = p.dram[p.insn_offset + 1 * isa::kInsnBytes];  // instruction 1: opcode 5
  op = static_cast<uint8_t>((op & ~0x7) | isa::kGemmAssignOpcode);
  std::vector<uint8_t> words = p.dram;
  EXPECT_THROW(sim::Fsim(config).run(words, p.insn_offset, p.insn_count), Error);
  expect_rtl_refuses(config, p, 1);
}

// Range checks (isa/README.md, "Range checks"): an instruction whose indices reach beyond a
// scratchpad is refused by fsim and by the RTL, which names it through its error status and
// index; the same instruction one index short runs on both. Config small: UOP 1024, INP 512,
// WGT 128, ACC 256 entries; a micro-op's src field has 9 bits (INP's), so it can name an ACC
// entry beyond the ACC scratchpad itself.
struct RangeCase {
  const char *name;
  std::function<isa::Insn(bool beyond)> insn;  // instruction 1, after LOAD UOP of `uop`
  std::function<isa::Uop(bool beyond)> uop;
};

void PrintTo(const RangeCase &c, std::ostream *os) {
  *os << c.name;
}

isa::Program range_program(const isa::HwConfig &config, const RangeCase &c, bool beyond) {
  isa::ProgramBuilder b(config);
  // At element 0 of DRAM: the LOAD's and STORE's dram_base.
  VACC_CHECK(b.add_region("w", isa::RegionKind::kWeight, isa::MemId::kWgt, 8) == 0);
  b.add_region("out", isa::RegionKind::kOutput, isa::MemId::kOut, 16);
  const uint32_t uops = b.uop_region_base();
  b.add_uop(c.uop(beyond));
  b.emit(load_one_uop(uops));
  b.emit(c.insn(beyond));
  b.emit(isa::FinishInsn{});
  return b.finish();
}

isa::GemmInsn gemm_loop(uint32_t loop_out, uint32_t loop_in) {
  isa::GemmInsn g;
  g.uop_end = 1;
  g.loop_out = loop_out;
  g.loop_in = loop_in;
  return g;
}

isa::AluInsn alu_loop(uint32_t loop_in) {
  isa::AluInsn a;
  a.op = isa::AluOp::kMax;
  a.uop_end = 1;
  a.loop_in = loop_in;
  return a;
}

std::vector<RangeCase> range_cases() {
  auto plain = [](bool) { return isa::Uop{0, 0, 0}; };
  return {
      {"GemmInpMicroOpPlusLoop",
       [](bool) {
         isa::GemmInsn g = gemm_loop(1, 2);
         g.inp.in = 1;
         return isa::Insn{g};
       },
       [](bool beyond) {
         return isa::Uop{0, beyond ? 511u : 510u, 0};
       }},
      {"GemmWgtLoopFactor",
       [](bool beyond) {
         isa::GemmInsn g = gemm_loop(beyond ? 3 : 2, 1);
         g.wgt.out = 127;
         return isa::Insn{g};
       },
       plain},
      {"GemmAccLoopFactor",
       [](bool beyond) {
         isa::GemmInsn g = gemm_loop(1, 3);
         g.reset = true;
         g.acc.in = beyond ? 128 : 127;
         return isa::Insn{g};
       },
       plain},
      {"AluDstMicroOpPlusLoop",
       [](bool) {
         isa::AluInsn a = alu_loop(2);
         a.dst.in = 1;
         a.use_imm = true;
         return isa::Insn{a};
       },
       [](bool beyond) {
         return isa::Uop{beyond ? 255u : 254u, 0, 0};
       }},
      {"AluSrcMicroOpField",
       [](bool) {
         isa::AluInsn a = alu_loop(1);
         a.use_imm = true;  // not read, but its reach counts, as in fsim
         return isa::Insn{a};
       },
       [](bool beyond) {
         return isa::Uop{0, beyond ? 300u : 255u, 0};
       }},
      {"UopEnd",
       [](bool beyond) {
         isa::AluInsn a = alu_loop(1);
         a.uop_begin = 1023;
         a.uop_end = beyond ? 1025 : 1024;
         return isa::Insn{a};
       },
       plain},
      {"UopBeginAfterEnd",
       [](bool beyond) {
         isa::GemmInsn g = gemm_loop(1, 1);
         g.uop_begin = beyond ? 2 : 1;
         g.uop_end = 1;
         return isa::Insn{g};
       },
       plain},
      {"StoreSramBase",
       [](bool beyond) {
         isa::MemInsn s;
         s.opcode = isa::Opcode::kStore;
         s.mem = isa::MemId::kOut;
         s.sram_base = beyond ? 241 : 240;
         s.y_size = 1;
         s.x_size = 16;
         s.x_stride = 16;
         return isa::Insn{s};
       },
       plain},
      {"LoadWgtPaddedTiles",
       [](bool beyond) {
         isa::MemInsn l;
         l.mem = isa::MemId::kWgt;
         l.sram_base = beyond ? 109 : 108;
         l.y_size = 2;
         l.x_size = 3;
         l.x_stride = 3;
         l.pad_top = 1;
         l.pad_bottom = 1;
         l.pad_left = 1;
         l.pad_right = 1;  // 4 x 5 = 20 tiles
         return isa::Insn{l};
       },
       plain},
  };
}

class RtlRange : public ::testing::TestWithParam<RangeCase> {};

TEST_P(RtlRange, BeyondItsScratchpadIsRefusedNamingTheInstructionOneShortRuns) {
  const isa::HwConfig config = small_config();
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for small";
  RtlSim sim(config);
  for (bool beyond : {false, true}) {
    SCOPED_TRACE(beyond ? "beyond" : "one short");
    const isa::Program p = range_program(config, GetParam(), beyond);
    std::vector<uint8_t> fsim_dram = p.dram, rtl_dram = p.dram;
    std::string fsim_error, rtl_error;
    try {
      Fsim(config).run(fsim_dram, p.insn_offset, p.insn_count);
    } catch (const Error &e) {
      fsim_error = e.what();
    }
    try {
      sim.run(rtl_dram, p.insn_offset, p.insn_count);
    } catch (const Error &e) {
      rtl_error = e.what();
    }
    if (!beyond) {
      EXPECT_EQ(fsim_error, "");
      EXPECT_EQ(rtl_error, "");
      EXPECT_EQ(sim.read_register(isa::reg::kErrorStatus), 0u);
      EXPECT_EQ(rtl_dram, fsim_dram);
      continue;
    }
    EXPECT_NE(fsim_error.find("instruction 1 ("), std::string::npos) << fsim_error;
    EXPECT_NE(rtl_error.find("rtl: instruction 1 ("), std::string::npos) << rtl_error;
    EXPECT_NE(rtl_error.find("reaches beyond a scratchpad"), std::string::npos) << rtl_error;
    EXPECT_EQ(sim.read_register(isa::reg::kErrorStatus), isa::reg::kErrorRange);
    EXPECT_EQ(sim.read_register(isa::reg::kErrorInsn), 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RtlRange, ::testing::ValuesIn(range_cases()),
                         [](const auto &info) { return std::string(info.param.name); });

// Random programs with one instruction pushed out of range (progen/out_of_range.h), through
// the fetch unit's checks and the compute engine's alike.
TEST(RtlRange, RandomOutOfRangeInstructionsAreRefusedAtTheSameIndex) {
  for (const char *name : {"default", "small", "wide"}) {
    const isa::HwConfig config = isa::load_config(isa::resolve_config_path(name));
    if (!rtl_model_available(config)) continue;
    auto rtl = std::make_unique<RtlSim>(config);
    std::map<std::string, int> kinds;
    for (uint64_t seed = 0; seed < 300; ++seed) {
      const CosimOutcome o = cosim_out_of_range_seed(config, *rtl, seed);
      ASSERT_TRUE(o.ok) << o.message;
      const std::string what = progen::out_of_range_program(config, seed).what;
      for (const char *kind : {"sram_base", "uop_", "_factor_"})
        if (what.find(kind) != std::string::npos) ++kinds[kind];
      rtl = std::make_unique<RtlSim>(config);
    }
    // Both places that check: the fetch unit (fields) and the compute engine (micro-ops).
    for (const char *kind : {"sram_base", "uop_", "_factor_"})
      EXPECT_GE(kinds[kind], 20) << name << ": " << kind;
  }
}

}  // namespace
}  // namespace vacc::sim
