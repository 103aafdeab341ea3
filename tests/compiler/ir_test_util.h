// Helpers for pass tests: compare IR structurally or as text, printing both on failure.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "vacc/isa/config.h"
#include "vacc/tir/equal.h"
#include "vacc/tir/ops.h"
#include "vacc/tir/printer.h"

namespace vacc::test {

inline ::testing::AssertionResult ir_equal(const tir::Func &actual, const tir::Func &expected) {
  if (tir::structural_equal(actual, expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "IR differs.\n--- actual\n"
                                       << tir::to_string(actual) << "--- expected\n"
                                       << tir::to_string(expected);
}

inline ::testing::AssertionResult ir_text(const tir::Func &actual, const std::string &expected) {
  std::string got = tir::to_string(actual);
  if (got == expected) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "IR text differs.\n--- actual\n"
                                       << got << "--- expected\n"
                                       << expected;
}

#define EXPECT_IR_EQ(actual, expected) EXPECT_TRUE(::vacc::test::ir_equal(actual, expected))
#define EXPECT_IR_TEXT(actual, text) EXPECT_TRUE(::vacc::test::ir_text(actual, text))

inline isa::HwConfig test_config(const std::string &name = "default") {
  return isa::load_config(std::string(VACC_SOURCE_DIR) + "/configs/" + name + ".yaml");
}

inline tir::Stmt loop(const tir::Var &v, int64_t n, tir::Stmt body) {
  return tir::For::make(v, n, tir::ForKind::kSerial, std::move(body));
}
inline tir::Expr c32(int64_t v) {
  return tir::make_const(tir::int32(), v);
}

}  // namespace vacc::test
