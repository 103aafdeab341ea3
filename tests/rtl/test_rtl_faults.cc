// Faults on the accelerator RTL: a program that deadlocks ends at the cycle limit with a
// message naming the waiting engines and instructions (never a hang); an illegal instruction
// raises the error bit and the simulator names its index.
#include <gtest/gtest.h>

#include "vacc/isa/registers.h"
#include "vacc/isa/config.h"
#include "vacc/isa/program.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/support/error.h"

namespace vacc::sim {
namespace {

isa::HwConfig small_config() { return isa::load_config(isa::resolve_config_path("small")); }

// load.uop; gemm pop_prev (no load ever pushes: deadlock); store; finish.
isa::Program deadlocking_program(const isa::HwConfig &config) {
  isa::ProgramBuilder b(config);
  b.add_region("out", isa::RegionKind::kOutput, isa::MemId::kOut, 4);
  const uint32_t uops = b.uop_region_base();
  b.add_uop({0, 0, 0});
  isa::MemInsn lu;
  lu.opcode = isa::Opcode::kLoad;
  lu.mem = isa::MemId::kUop;
  lu.dram_base = uops;
  lu.y_size = 1;
  lu.x_size = 1;
  lu.x_stride = 1;
  b.emit(lu);
  isa::GemmInsn g;
  g.reset = true;
  g.uop_end = 1;
  g.deps.pop_prev = true;
  b.emit(g);
  b.emit(isa::FinishInsn{});
  return b.finish();
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
  RtlSim sim(config);
  std::vector<uint8_t> dram = p.dram;
  try {
    sim.run(dram, p.insn_offset, p.insn_count);
    FAIL() << "expected an illegal-instruction error";
  } catch (const Error &e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("illegal instruction at index 2"), std::string::npos) << msg;
  }
  EXPECT_EQ(sim.read_register(isa::reg::kErrorStatus) & isa::reg::kErrorIllegalInsn,
            isa::reg::kErrorIllegalInsn);
  EXPECT_EQ(sim.read_register(isa::reg::kErrorInsn), 2u);
}

}  // namespace
}  // namespace vacc::sim
