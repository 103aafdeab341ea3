// Schedules lowered to loop IR and run by the interpreter against plain C++: split (with and
// without a dividing factor), fuse, reorder, compute_at with bounds inference, cache_read.
#include "vacc/schedule/schedule.h"

#include <gtest/gtest.h>

#include "ir_test_util.h"
#include "vacc/schedule/to_loop_ir.h"
#include "vacc/tir/interpreter.h"

namespace vacc {
namespace {

using tir::Expr;

// b[i, j] = sum_k a[i, k] * 3 + k, for a 7 x 5 input; c = b + 1 computed at a tile of c.
std::vector<int64_t> run(
    const std::function<void(schedule::Schedule &, const te::Tensor &, const te::Tensor &)> &sched,
    std::string *text = nullptr) {
  te::Tensor a = te::placeholder("a", {7, 5}, tir::int32());
  te::Tensor b = te::reduce_sum("b", {7, 5}, {{"k", 5}}, [&](const auto &v, const auto &r) {
    return (*a)({v[0], r[0]}) * 3 + r[0];
  });
  te::Tensor c = te::compute("c", {7, 5}, [&](const auto &v) { return (*b)({v[0], v[1]}) + 1; });
  schedule::Schedule s({c});
  sched(s, b, c);
  tir::Func f = schedule::to_loop_ir(s, "f", {a, c});
  if (text) *text = tir::to_string(f);
  std::vector<std::vector<int64_t>> args = {std::vector<int64_t>(35), std::vector<int64_t>(35)};
  for (int i = 0; i < 35; ++i) args[0][i] = (i * 37) % 11 - 5;
  tir::interpret(f, args);
  return args[1];
}

std::vector<int64_t> reference() {
  std::vector<int64_t> out(35);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 5; ++j) {
      int64_t s = 0;
      for (int k = 0; k < 5; ++k) s += (((i * 5 + k) * 37) % 11 - 5) * 3 + k;
      out[i * 5 + j] = s + 1;
    }
  return out;
}

TEST(Schedule, DefaultScheduleComputesTheDefinition) {
  EXPECT_EQ(run([](auto &, auto &, auto &) {}), reference());
}

TEST(Schedule, NonDividingSplitLeavesAGuardAndStaysCorrect) {
  std::string text;
  auto got = run([](schedule::Schedule &s, const te::Tensor &,
                    const te::Tensor &c) { s[c].split(s[c].axis()[0], 3); },
                 &text);
  EXPECT_EQ(got, reference());
  EXPECT_NE(text.find("if (i0.o * 3 + i0.i < 7)"), std::string::npos) << text;
}

TEST(Schedule, ComputeAtInfersTheTileShapeIncludingThePartialTile) {
  std::string text;
  auto got = run(
      [](schedule::Schedule &s, const te::Tensor &b, const te::Tensor &c) {
        auto &sc = s[c];
        auto [io, ii] = sc.split(sc.axis()[0], 2);
        s[b].compute_at(sc, io);
      },
      &text);
  EXPECT_EQ(got, reference());
  // b is realized per tile of two rows of c.
  EXPECT_NE(text.find("alloc b: int32[2, 5] local"), std::string::npos) << text;
}

TEST(Schedule, FuseAndReorderStayCorrect) {
  // Bounds through a fused (div/mod) index are conservative: the whole tensor.
  auto got = run([](schedule::Schedule &s, const te::Tensor &b, const te::Tensor &c) {
    auto &sc = s[c];
    auto [io, ii] = sc.split(sc.axis()[0], 2);
    sc.reorder({io, sc.axis()[1], ii});
    sc.fuse(sc.axis()[1], ii);
    s[b].compute_at(sc, io);
  });
  EXPECT_EQ(got, reference());
}

TEST(Schedule, CacheReadCopiesTheReadRegion) {
  std::string text;
  auto got = run(
      [](schedule::Schedule &s, const te::Tensor &b, const te::Tensor &c) {
        te::Tensor a = s[b].op()->inputs[0];
        te::Tensor al = s.cache_read(a, tir::Scope::kLocal, {b});
        s[b].compute_at(s[c], s[c].axis()[0]);
        s[al].compute_at(s[b], s[b].leaf_iter_vars()[0]);
      },
      &text);
  EXPECT_EQ(got, reference());
  EXPECT_NE(text.find("alloc a.local: int32[1, 5] local"), std::string::npos) << text;
}

}  // namespace
}  // namespace vacc
