// The packed multiplier (hw/rtl/vacc_mul2_packed.sv, in mul2_packed_tb.sv as vacc_gemm_core
// builds each), verilated alone, against plain C++ products: every (a, b_hi, b_lo) of int8,
// 2^24 triples, so both products are checked for all 65 536 (a, b) pairs with every value of
// the other packed operand (whose sign decides the upper product's correction). About a second.
#include <gtest/gtest.h>

#include <cstdint>

#include "Vvacc_mul2_packed.h"

namespace vacc::test {
namespace {

TEST(Mul2Packed, EveryInt8TripleGivesBothProductsExactly) {
  Vvacc_mul2_packed m;
  m.clk_i = 0;
  m.en_i = 1;
  m.eval();
  int64_t checked = 0;
  for (int a = -128; a < 128; ++a) {
    for (int hi = -128; hi < 128; ++hi) {
      for (int lo = -128; lo < 128; ++lo) {
        m.a_i = static_cast<uint8_t>(a);
        m.b_hi_i = static_cast<uint8_t>(hi);
        m.b_lo_i = static_cast<uint8_t>(lo);
        m.clk_i = 1;
        m.eval();
        m.clk_i = 0;
        m.eval();
        const int got_hi = static_cast<int16_t>(m.prod_hi_o);
        const int got_lo = static_cast<int16_t>(m.prod_lo_o);
        if (got_hi != a * hi || got_lo != a * lo) {
          FAIL() << "a=" << a << " b_hi=" << hi << " b_lo=" << lo << ": got " << got_hi << ", "
                 << got_lo << ", expected " << a * hi << ", " << a * lo;
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, int64_t{1} << 24);
}

// Without en_i the products hold (the GEMM core's valid bit gates the multiplier).
TEST(Mul2Packed, HoldsWithoutEnable) {
  Vvacc_mul2_packed m;
  m.a_i = static_cast<uint8_t>(-7);
  m.b_hi_i = 100;
  m.b_lo_i = static_cast<uint8_t>(-3);
  m.en_i = 1;
  m.clk_i = 0;
  m.eval();
  m.clk_i = 1;
  m.eval();
  m.en_i = 0;
  m.a_i = 55;
  for (int i = 0; i < 3; ++i) {
    m.clk_i = 0;
    m.eval();
    m.clk_i = 1;
    m.eval();
  }
  EXPECT_EQ(static_cast<int16_t>(m.prod_hi_o), -700);
  EXPECT_EQ(static_cast<int16_t>(m.prod_lo_o), 21);
}

}  // namespace
}  // namespace vacc::test
