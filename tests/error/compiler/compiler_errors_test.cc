// One case per user-facing diagnostic of the tensor compiler: each bad schedule must throw
// vacc::Error whose message names the stage / loop / buffer at fault, never crash or
// produce a wrong program.
#include <gtest/gtest.h>

#include "vacc/lower/lower.h"
#include "vacc/lower/operators.h"
#include "vacc/schedule/schedule.h"
#include "vacc/schedule/to_loop_ir.h"
#include "vacc/support/error.h"
#include "vacc/tir/ops.h"

namespace vacc {
namespace {

isa::HwConfig config(const std::string &name) {
  return isa::load_config(std::string(VACC_SOURCE_DIR) + "/configs/" + name + ".yaml");
}

// Runs f and returns the vacc::Error message (fails the test when nothing is thrown).
template <typename F>
std::string error_of(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a vacc::Error";
  return "";
}

// A blocked matmul acc[i, j, b, o] = sum_k inp[i, k, b, c] * wgt[j, k, o, c], scheduled for
// the accelerator except for what each test breaks.
struct Matmul {
  te::Tensor inp, wgt, acc, out;
  std::unique_ptr<schedule::Schedule> s;
  te::Tensor inp_l, wgt_l;
  Matmul(const isa::HwConfig &c, int64_t m, bool cache_wgt = true, bool transposed = false) {
    tir::DataType at = tir::int32();
    inp = te::placeholder("inp", {m, 2, c.batch, c.block_in}, tir::int8());
    wgt = te::placeholder("wgt", {2, 2, c.block_out, c.block_in}, tir::int8());
    acc = te::reduce_sum("acc", {m, 2, c.batch, c.block_out}, {{"k", 2}, {"c", c.block_in}},
                         [&](const auto &v, const auto &r) {
                           return tir::cast(at, (*inp)({v[0], r[0], v[2], r[1]})) *
                                  tir::cast(at, transposed ? (*wgt)({v[1], r[0], r[1], v[3]})
                                                           : (*wgt)({v[1], r[0], v[3], r[1]}));
                         },
                         {"i", "j", "b", "o"});
    out = te::compute("out", {m, 2, c.batch, c.block_out},
                      [&](const auto &v) {
                        return tir::cast(tir::int8(), (*acc)({v[0], v[1], v[2], v[3]}));
                      },
                      {"i", "j", "b", "o"});
    s = std::make_unique<schedule::Schedule>(std::vector<te::Tensor>{out});
    auto &S = *s;
    inp_l = S.cache_read(inp, tir::Scope::kInp, {acc});
    if (cache_wgt) wgt_l = S.cache_read(wgt, tir::Scope::kWgt, {acc});
    S[acc].set_scope(tir::Scope::kAcc);
    auto oa = S[out].axis();
    S[out].pragma(oa[1], "dma_copy");
    S[acc].compute_at(S[out], oa[0]);  // one row of output blocks per tile
    auto ax = S[acc].axis();
    auto r = S[acc].reduce_axis();
    S[acc].reorder({r[0], ax[0], ax[1], ax[2], ax[3], r[1]});
  }
  tir::Func lower(const isa::HwConfig &c) {
    auto &S = *s;
    auto &sa = S[acc];
    if (!sa.tensorized().size()) sa.tensorize(sa.axis()[2], "gemm");
    S[inp_l].compute_at(sa, sa.leaf_iter_vars()[0]);
    S[inp_l].pragma(S[inp_l].axis()[0], "dma_copy");
    if (wgt_l) {
      S[wgt_l].compute_at(sa, sa.leaf_iter_vars()[0]);
      S[wgt_l].pragma(S[wgt_l].axis()[0], "dma_copy");
    }
    return lower::lower_loops(schedule::to_loop_ir(S, "matmul", {inp, wgt, out}), c);
  }
};

TEST(CompilerErrors, TensorizeOperandInWrongScopeNamesBufferAndScope) {
  isa::HwConfig c = config("default");
  Matmul m(c, 2, /*cache_wgt=*/false);
  std::string msg = error_of([&] { m.lower(c); });
  EXPECT_NE(msg.find("'gemm' does not match"), std::string::npos) << msg;
  EXPECT_NE(msg.find("buffer 'wgt' is in scope 'global'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("scope 'wgt'"), std::string::npos) << msg;
}

TEST(CompilerErrors, TensorizeAtWrongLoopNamesTheLoopAndExtent) {
  isa::HwConfig c = config("default");
  Matmul m(c, 2);
  auto &sa = (*m.s)[m.acc];
  // Splitting the output tile axis leaves an 8-wide loop where the core is 16 wide.
  auto ax = sa.axis();
  auto r = sa.reduce_axis();
  auto [oo, oi] = sa.split(ax[3], 8);
  sa.reorder({r[0], ax[0], ax[1], oo, ax[2], oi, r[1]});
  sa.tensorize(ax[2], "gemm");
  std::string msg = error_of([&] { m.lower(c); });
  EXPECT_NE(msg.find("at loop 'b'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("loop 'o.i' has extent 8 where 'gemm.reset' expects 16"), std::string::npos)
      << msg;
}

TEST(CompilerErrors, TensorizeIndexMismatchNamesTheIndex) {
  isa::HwConfig c = config("default");
  Matmul m(c, 2, true, /*transposed=*/true);  // weights stored [.., c, o]: not the core's layout
  std::string msg = error_of([&] { m.lower(c); });
  EXPECT_NE(msg.find("index 2 of buffer 'wgt.wgt' is `c` where the intrinsic expects the loop "
                     "variable `o`"),
            std::string::npos)
      << msg;
}

TEST(CompilerErrors, ScratchpadOverflowNamesBufferSizeAndLimit) {
  isa::HwConfig c = config("small");
  lower::Conv2dParams p;
  p.in_channels = 8 * c.block_in;
  p.out_channels = c.block_out;
  p.height = p.width = 16;
  lower::AccelSchedule s;
  s.tile_h = 8;
  s.tile_w = 8;
  s.tile_ic = 8;
  lower::Operator op = lower::define(c, p, s);
  std::string msg = error_of([&] { lower::lower_loops(op.func, c); });
  EXPECT_NE(msg.find("scratchpad overflow: buffer 'pad.inp' needs 800 inp tiles"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("the inp scratchpad holds 512 tiles (4 KiB, config 'small')"),
            std::string::npos)
      << msg;
}

TEST(CompilerErrors, SplitNeedingAGuardInsideTheGemmIsRejected) {
  isa::HwConfig c = config("default");
  Matmul m(c, 5);
  auto &sa = (*m.s)[m.acc];
  sa.compute_root();  // the whole 5-row accumulator, split into tiles of 2 rows
  auto ax = sa.axis();
  auto r = sa.reduce_axis();
  auto [io, ii] = sa.split(ax[0], 2);  // 5 rows in tiles of 2: the last tile is partial
  sa.reorder({r[0], io, ii, ax[1], ax[2], ax[3], r[1]});
  // Tensorized at the tile's rows, the guard falls inside the intrinsic (at ax[2], outside it,
  // the guard would wrap the whole GEMM: a tail tile).
  sa.tensorize(ii, "gemm");
  std::string msg = error_of([&] { m.lower(c); });
  EXPECT_NE(msg.find("guarded by `i.o * 2 + i.i < 5`"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot express the guard"), std::string::npos) << msg;
}

TEST(CompilerErrors, ReductionAxisBoundToVirtualThreadNamesStageAndAxis) {
  isa::HwConfig c = config("default");
  Matmul m(c, 2);
  auto &sa = (*m.s)[m.acc];
  // Not a structured binding: clang 14 (the sanitizer build) cannot capture one in a lambda.
  const auto ko = std::get<0>(sa.split(sa.reduce_axis()[0], 1));
  std::string msg = error_of([&] { sa.bind_vthread(ko); });
  EXPECT_NE(msg.find("stage 'acc': 'k.o' is (split from) a reduction axis"), std::string::npos)
      << msg;
}

TEST(CompilerErrors, SplitOfAnAxisThatIsNoLongerALeaf) {
  isa::HwConfig c = config("default");
  Matmul m(c, 2);
  auto &sa = (*m.s)[m.acc];
  auto ax = sa.axis();
  sa.split(ax[0], 1);
  std::string msg = error_of([&] { sa.split(ax[0], 1); });
  EXPECT_NE(msg.find("split of stage 'acc': axis 'i' is not a leaf loop"), std::string::npos)
      << msg;
}

TEST(CompilerErrors, StoreWithoutNarrowingNamesTheOutput) {
  isa::HwConfig c = config("default");
  te::Tensor a = te::placeholder("a", {2, 1, 16}, tir::int32());
  te::Tensor b = te::compute("b", {2, 1, 16}, [&](const auto &v) {
    return (*a)({v[0], v[1], v[2]}) + tir::make_const(tir::int32(), 1);
  });
  te::Tensor o = te::compute("o", {2, 1, 16}, [&](const auto &v) {
    return (*b)({v[0], v[1], v[2]});
  });
  schedule::Schedule s({o});
  te::Tensor al = s.cache_read(a, tir::Scope::kAcc, {b});
  s[b].set_scope(tir::Scope::kAcc);
  s[o].pragma(s[o].axis()[1], "dma_copy");
  s[b].compute_at(s[o], s[o].axis()[0]);
  s[al].compute_at(s[o], s[o].axis()[0]);
  s[b].pragma(s[b].axis()[0], "alu");
  s[al].pragma(s[al].axis()[0], "dma_copy");
  std::string msg = error_of([&] { lower::lower_loops(schedule::to_loop_ir(s, "f", {a, o}), c); });
  EXPECT_NE(msg.find("dma_copy to 'o': a store narrows the accumulator to the 8-bit output"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace vacc
