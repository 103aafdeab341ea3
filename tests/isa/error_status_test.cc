// The error register's messages (isa/error_status.h), one per bit, as the rtl engine and the
// XRT device report them: the index and the error status in each, the instruction named by
// what it decodes to when the program is known, the bits' precedence.
#include "vacc/isa/error_status.h"

#include <gtest/gtest.h>

#include "vacc/isa/registers.h"

namespace vacc::isa {
namespace {

std::vector<Insn> program() {
  MemInsn load;
  load.mem = MemId::kInp;
  load.deps.push_next = true;
  AluInsn alu;
  alu.op = AluOp::kAdd;
  return {load, alu, FinishInsn{}};
}

TEST(ErrorStatus, NoErrorIsNoMessage) {
  EXPECT_EQ(error_status_message(0, 7), "");
}

TEST(ErrorStatus, IllegalInstructionNamesItsIndexAndWhatItDecodesTo) {
  const std::vector<Insn> p = program();
  EXPECT_EQ(error_status_message(reg::kErrorIllegalInsn, 1, &p),
            "illegal instruction at index 1 (decoded as alu.add); the accelerator stopped with "
            "error status 0x1");
  EXPECT_EQ(error_status_message(reg::kErrorIllegalInsn, 9, &p),
            "illegal instruction at index 9 (it does not decode); the accelerator stopped with "
            "error status 0x1");
  EXPECT_EQ(error_status_message(reg::kErrorIllegalInsn, 9),
            "illegal instruction at index 9; the accelerator stopped with error status 0x1");
}

TEST(ErrorStatus, RangeErrorPointsAtFsimForTheField) {
  const std::vector<Insn> p = program();
  EXPECT_EQ(error_status_message(reg::kErrorRange, 0, &p),
            "instruction 0 (load.inp push_next) reaches beyond a scratchpad; the accelerator "
            "stopped with error status 0x4 (`vacc sim --engine fsim` on the program names the "
            "field and index)");
  EXPECT_EQ(error_status_message(reg::kErrorRange, 3),
            "instruction 3 reaches beyond a scratchpad; the accelerator stopped with error status "
            "0x4 (`vacc sim --engine fsim` on the program names the field and index)");
}

TEST(ErrorStatus, CycleLimitIsADeadlockOrATooLowLimit) {
  EXPECT_EQ(error_status_message(reg::kErrorDeadlock, 2),
            "the accelerator reached its cycle limit at instruction 2 (a deadlock, or a limit too "
            "low for the program); error status 0x2");
}

TEST(ErrorStatus, UnknownBitsAreReportedAsTheStatus) {
  EXPECT_EQ(error_status_message(1u << 5, 0), "the accelerator reported error status 0x20");
}

TEST(ErrorStatus, AnIllegalInstructionOutranksTheOtherBits) {
  const std::string m =
      error_status_message(reg::kErrorIllegalInsn | reg::kErrorRange | reg::kErrorDeadlock, 4);
  EXPECT_EQ(m.rfind("illegal instruction at index 4;", 0), 0u) << m;
  EXPECT_NE(m.find("error status 0x7"), std::string::npos) << m;
  EXPECT_EQ(error_status_message(reg::kErrorRange | reg::kErrorDeadlock, 4)
                .rfind("instruction 4 reaches beyond a scratchpad", 0),
            0u);
}

}  // namespace
}  // namespace vacc::isa
