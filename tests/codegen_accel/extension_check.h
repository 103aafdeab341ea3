// An ISA extension's effect on one compiled convolution, for the extensions' compiler tests:
// compiled for a config without and one with it, both give the C++ reference's outputs on fsim
// and the one with it takes fewer perf cycles.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "layer_kit.h"
#include "reference.h"

namespace vacc::test {

inline size_t count_op(const isa::CommandList &l, isa::AluOp op) {
  size_t n = 0;
  for (const auto &cmd : l.commands)
    if (const auto *a = std::get_if<isa::AluCommand>(&cmd)) n += a->op == op;
  return n;
}

// A layer compiled for `without` (a) and for `with` (b), an ALU extension that fuses: b has
// some `fused` operations where a has none, each in place of one of every `replaced`
// operation, and nothing else changes; both give `want` on fsim. Returns the perf cycles of
// a and b.
inline std::pair<uint64_t, uint64_t> expect_fused(
    const isa::HwConfig &without, const isa::HwConfig &with, const lower::LoweredLayer &a,
    const lower::LoweredLayer &b, isa::AluOp fused, std::initializer_list<isa::AluOp> replaced,
    const std::vector<std::vector<int64_t>> &args, const std::vector<int64_t> &want) {
  EXPECT_EQ(count_op(a.commands, fused), 0u);
  const size_t n = count_op(b.commands, fused);
  EXPECT_GT(n, 0u);
  EXPECT_EQ(a.commands.count_alu(), b.commands.count_alu() + n * (replaced.size() - 1));
  for (isa::AluOp op : replaced)
    EXPECT_EQ(count_op(a.commands, op), count_op(b.commands, op) + n) << isa::alu_op_name(op);
  EXPECT_EQ(a.commands.count_gemm(), b.commands.count_gemm());
  EXPECT_EQ(run_layer("fsim", without, a, args).out, want);
  EXPECT_EQ(run_layer("fsim", with, b, args).out, want);
  return {run_layer("perf", without, a, args).counters.at("cycles"),
          run_layer("perf", with, b, args).counters.at("cycles")};
}

inline void expect_same_outputs_fewer_cycles(const isa::HwConfig &without,
                                             const isa::HwConfig &with,
                                             const lower::Conv2dParams &p,
                                             const lower::LoweredLayer &a,
                                             const lower::LoweredLayer &b) {
  const auto args = random_layer_args(b.op, 40);
  const auto want = conv2d_reference(without, p, args[0], args[1], args[2]);
  EXPECT_EQ(run_layer("fsim", without, a, args).out, want);
  EXPECT_EQ(run_layer("fsim", with, b, args).out, want);
  EXPECT_LT(run_layer("perf", with, b, args).counters.at("cycles"),
            run_layer("perf", without, a, args).counters.at("cycles"));
}

}  // namespace vacc::test
