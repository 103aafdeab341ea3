// One before/expected pair (or more) per pass: the `before` IR is built by hand, the pass
// runs, and the result must equal an `expected` IR built by hand (structurally) and read as
// the expected text.
#include <gtest/gtest.h>

#include "../expect_error.h"
#include "ir_test_util.h"
#include "vacc/lower/loops/fold_uop_loops.h"
#include "vacc/lower/loops/inject_virtual_threads.h"
#include "vacc/lower/loops/insert_dependencies.h"
#include "vacc/lower/loops/lower_dma_copies.h"
#include "vacc/lower/loops/plan_scratchpads.h"
#include "vacc/lower/loops/tensorize.h"
#include "vacc/support/error.h"
#include "vacc/tir/interpreter.h"

namespace vacc {
namespace {

using namespace tir;
using test::c32;
using test::loop;

Stmt dma(DmaDir dir, isa::MemId mem, Buffer sram, Expr si, Buffer dram, Expr di, Expr y, Expr x,
         Expr stride, std::vector<Expr> pad = {0, 0, 0, 0}) {
  Dma d;
  d.dir = dir;
  d.mem = mem;
  d.sram = sram;
  d.sram_index = si;
  d.dram = dram;
  d.dram_index = di;
  d.y_size = y;
  d.x_size = x;
  d.x_stride = stride;
  d.pad_top = pad[0];
  d.pad_bottom = pad[1];
  d.pad_left = pad[2];
  d.pad_right = pad[3];
  return Dma::make(d);
}

// ---------------------------------------------------------------- lower_dma_copies

TEST(LowerDmaCopies, PaddedLoadBecomesOneDmaWithPadding) {
  isa::HwConfig c = test::test_config();
  Buffer data = make_buffer("data", int8(), {6, 6, 1, 16});
  Buffer out = make_buffer("out", int8(), {6, 6, 1, 16});
  Buffer buf = make_buffer("buf", int8(), {4, 5, 1, 16}, Scope::kInp);
  Var o = make_var("o"), y = make_var("y"), x = make_var("x"), b = make_var("b"), e = make_var("e");
  // Rows o*2-1 .. o*2+2 and columns -1 .. 3 of `data`, zero outside.
  Expr h = o * 2 + y - 1, w = x - 1;
  Expr inside = h >= 0 && h < 6 && w >= 0;
  Stmt copy = loop(y, 4,
                   loop(x, 5,
                        loop(b, 1,
                             loop(e, 16,
                                  Store::make(buf, {y, x, b, e},
                                              select(inside, load(data, {h, w, b, e}),
                                                     make_const(int8(), 0)))))));
  Stmt before = loop(o, 3, Allocate::make(buf, Attr::make("pragma", "dma_copy", copy)));
  Func f{"f", {data, out}, before};
  Func got = lower_dma_copies(f, c);
  Stmt want =
      loop(o, 3,
           Allocate::make(buf, dma(DmaDir::kLoad, isa::MemId::kInp, buf, 0, data,
                                   o * 12 + max(0, o * -2 + 1) * 6 - 6,
                                   min(4, o * -2 + 7) - max(0, o * -2 + 1), c32(4), c32(6),
                                   {max(0, o * -2 + 1), min(4, o * -2 + 7) * -1 + 4, 1, 0})));
  EXPECT_IR_EQ(got, (Func{"f", {data, out}, want}));
  EXPECT_IR_TEXT(got, R"(func f(data: int8[6, 6, 1, 16] global, out: int8[6, 6, 1, 16] global) {
  for (o, 0, 3) {
    alloc buf: int8[4, 5, 1, 16] inp {
      dma.load inp buf[0] <- data[o * 12 + max(0, o * -2 + 1) * 6 - 6] y=min(4, o * -2 + 7) - max(0, o * -2 + 1) x=4 stride=6 pad=(max(0, o * -2 + 1), min(4, o * -2 + 7) * -1 + 4, 1, 0)
    }
  }
}
)");
  // Both forms load the same tile contents, zero padding included: each tile is copied out
  // to `seen` after its load, and the two forms' `seen` must be equal (and not all zero).
  Buffer seen = make_buffer("seen", int8(), {3, 4, 5, 1, 16});
  Var y2 = make_var("y2"), x2 = make_var("x2"), b2 = make_var("b2"), e2 = make_var("e2");
  Stmt observe = loop(
      y2, 4,
      loop(
          x2, 5,
          loop(b2, 1,
               loop(e2, 16, Store::make(seen, {o, y2, x2, b2, e2}, load(buf, {y2, x2, b2, e2}))))));
  auto observed = [&](Stmt load_tile) {
    return Func{
        "g", {data, seen}, loop(o, 3, Allocate::make(buf, Seq::make({load_tile, observe})))};
  };
  const Stmt lowered_copy =
      lower_dma_copies(observed(Attr::make("pragma", "dma_copy", copy)), c).body;
  std::vector<std::vector<int64_t>> by_loops = {std::vector<int64_t>(576),
                                                std::vector<int64_t>(960)};
  for (size_t i = 0; i < 576; ++i) by_loops[0][i] = static_cast<int64_t>(i % 251) - 120;
  std::vector<std::vector<int64_t>> by_dma = by_loops;
  interpret(observed(Attr::make("pragma", "dma_copy", copy)), by_loops);
  interpret(Func{"g", {data, seen}, lowered_copy}, by_dma);
  EXPECT_EQ(by_dma[1], by_loops[1]);
  EXPECT_NE(std::count(by_loops[1].begin(), by_loops[1].end(), 0), 960);
}

TEST(LowerDmaCopies, StoreNarrowsAndShrinksPartialRows) {
  isa::HwConfig c = test::test_config();
  Buffer acc = make_buffer("acc", int32(), {3, 4, 1, 16}, Scope::kAcc);
  Buffer out = make_buffer("out", int8(), {7, 4, 1, 16});
  Var t = make_var("t"), y = make_var("y"), x = make_var("x"), b = make_var("b"), e = make_var("e");
  Stmt copy =
      loop(y, 3,
           loop(x, 4,
                loop(b, 1,
                     loop(e, 16,
                          IfThenElse::make(t * 3 + y < 7,
                                           Store::make(out, {t * 3 + y, x, b, e},
                                                       cast(int8(), load(acc, {y, x, b, e}))))))));
  Func f{"f", {out}, loop(t, 3, Allocate::make(acc, Attr::make("pragma", "dma_copy", copy)))};
  Func got = lower_dma_copies(f, c);
  EXPECT_IR_TEXT(got, R"(func f(out: int8[7, 4, 1, 16] global) {
  for (t, 0, 3) {
    alloc acc: int32[3, 4, 1, 16] acc {
      dma.store out out[t * 12] <- acc[0] y=min(3, t * -3 + 7) x=4 stride=4
    }
  }
}
)");
}

// ---------------------------------------------------------------- tensorize

TEST(Tensorize, GemmNestBecomesGemmAndInitBecomesReset) {
  isa::HwConfig c = test::test_config();
  Buffer inp = make_buffer("inp", int8(), {2, 1, 16}, Scope::kInp);
  Buffer wgt = make_buffer("wgt", int8(), {3, 16, 16}, Scope::kWgt);
  Buffer acc = make_buffer("acc", int32(), {2, 3, 1, 16}, Scope::kAcc);
  Var i = make_var("i"), j = make_var("j"), b = make_var("b"), o = make_var("o"), k = make_var("k");
  Stmt init =
      Attr::make("tensorize", "gemm",
                 loop(b, 1, loop(o, 16, Store::make(acc, {i, j, b, o}, make_const(int32(), 0)))));
  Stmt update =
      Attr::make("tensorize", "gemm",
                 loop(b, 1,
                      loop(o, 16,
                           loop(k, 16,
                                Store::make(acc, {i, j, b, o},
                                            load(acc, {i, j, b, o}) +
                                                cast(int32(), load(inp, {i, b, k})) *
                                                    cast(int32(), load(wgt, {j, o, k})))))));
  Stmt body = Allocate::make(
      inp,
      Allocate::make(wgt, Allocate::make(acc, loop(i, 2, loop(j, 3, Seq::make({init, update}))))));
  Func got = tensorize(Func{"f", {}, body}, c);
  EXPECT_IR_TEXT(got, R"(func f() {
  alloc inp: int8[2, 1, 16] inp {
    alloc wgt: int8[3, 16, 16] wgt {
      alloc acc: int32[2, 3, 1, 16] acc {
        for (i, 0, 2) {
          for (j, 0, 3) {
            gemm.reset acc[i * 3 + j]
            gemm acc[i * 3 + j] += inp[i] * wgt[j]
          }
        }
      }
    }
  }
}
)");
}

TEST(Tensorize, AluPragmaKeepsOuterLoopsAndMatchesImmediates) {
  isa::HwConfig c = test::test_config();
  Buffer acc = make_buffer("acc", int32(), {4, 1, 16}, Scope::kAcc);
  Buffer bias = make_buffer("bias", int32(), {1, 16}, Scope::kAcc);
  Var i = make_var("i"), b = make_var("b"), o = make_var("o");
  auto nest = [&](Expr v) {
    return Attr::make("pragma", "alu",
                      loop(i, 4, loop(b, 1, loop(o, 16, Store::make(acc, {i, b, o}, v)))));
  };
  Expr a = load(acc, {i, b, o});
  Stmt body = Allocate::make(
      acc, Allocate::make(bias, Seq::make({nest(load(bias, {b, o}) + a), nest(a >> 3), nest(a - 7),
                                           nest(min(a, 127))})));
  Func got = tensorize(Func{"f", {}, body}, c);
  EXPECT_IR_TEXT(got, R"(func f() {
  alloc acc: int32[4, 1, 16] acc {
    alloc bias: int32[1, 16] acc {
      for (i, 0, 4) {
        alu.add acc[i] <- bias[0]
      }
      for (i, 0, 4) {
        alu.shr acc[i] <- imm 3
      }
      for (i, 0, 4) {
        alu.add acc[i] <- imm -7
      }
      for (i, 0, 4) {
        alu.min acc[i] <- imm 127
      }
    }
  }
}
)");
}

// ---------------------------------------------------------------- inject_virtual_threads

TEST(InjectVirtualThreads, InterleavesPerThreadCopiesWithOwnBuffers) {
  Buffer data = make_buffer("data", int8(), {4, 1, 16});
  Buffer out = make_buffer("out", int8(), {4, 1, 16});
  Buffer buf = make_buffer("buf", int8(), {1, 1, 16}, Scope::kInp);
  Buffer acc = make_buffer("acc", int32(), {1, 1, 16}, Scope::kAcc);
  Var vt = make_var("vt"), k = make_var("k");
  Stmt ld = dma(DmaDir::kLoad, isa::MemId::kInp, buf, 0, data, vt * 2 + k, 1, 1, 1);
  Gemm g;
  g.reset = true;
  g.acc = acc;
  g.acc_index = 0;
  Stmt st = dma(DmaDir::kStore, isa::MemId::kOut, acc, 0, out, vt, 1, 1, 1);
  Stmt body = For::make(
      vt, 2, ForKind::kVThread,
      Allocate::make(
          buf, Allocate::make(acc, Seq::make({loop(k, 2, Seq::make({ld, Gemm::make(g)})), st}))));
  Func got = inject_virtual_threads(Func{"f", {data, out}, body});
  EXPECT_IR_TEXT(got, R"(func f(data: int8[4, 1, 16] global, out: int8[4, 1, 16] global) {
  alloc buf.t0: int8[1, 1, 16] inp vthread=0 {
    alloc buf.t1: int8[1, 1, 16] inp vthread=1 {
      alloc acc.t0: int32[1, 1, 16] acc vthread=0 {
        alloc acc.t1: int32[1, 1, 16] acc vthread=1 {
          for (k, 0, 2) {
            dma.load inp buf.t0[0] <- data[k] y=1 x=1 stride=1 pad=(0, 0, 0, 0)
            dma.load inp buf.t1[0] <- data[k + 2] y=1 x=1 stride=1 pad=(0, 0, 0, 0)
            gemm.reset acc.t0[0]
            gemm.reset acc.t1[0]
          }
          dma.store out out[0] <- acc.t0[0] y=1 x=1 stride=1
          dma.store out out[1] <- acc.t1[0] y=1 x=1 stride=1
        }
      }
    }
  }
}
)");
}

// ---------------------------------------------------------------- plan_scratchpads

TEST(PlanScratchpads, StacksNestedBuffersAndReusesSiblings) {
  isa::HwConfig c = test::test_config();
  Buffer a = make_buffer("a", int8(), {3, 1, 16}, Scope::kInp);
  Buffer b = make_buffer("b", int8(), {2, 1, 16}, Scope::kInp);
  Buffer d = make_buffer("d", int8(), {5, 1, 16}, Scope::kInp);
  Buffer w = make_buffer("w", int8(), {1, 16, 16}, Scope::kWgt);
  Gemm g;
  g.reset = true;
  Buffer acc = make_buffer("acc", int32(), {1, 1, 16}, Scope::kAcc);
  g.acc = acc;
  g.acc_index = 0;
  Stmt leaf = Gemm::make(g);
  Stmt body =
      Allocate::make(acc, Seq::make({Allocate::make(a, Allocate::make(b, Allocate::make(w, leaf))),
                                     Allocate::make(d, leaf)}));
  Func got = plan_scratchpads(Func{"f", {}, body}, c);
  Stmt want = Allocate::make(
      acc,
      Seq::make({Allocate::make(a, Allocate::make(b, Allocate::make(w, leaf, 0), 3), 0),
                 Allocate::make(d, leaf, 0)}),
      0);
  EXPECT_IR_EQ(got, (Func{"f", {}, want}));
}

// ---------------------------------------------------------------- fold_uop_loops

TEST(FoldUopLoops, TwoInnermostAffineLoopsFoldIntoTheGemm) {
  Buffer inp = make_buffer("inp", int8(), {4, 6, 1, 16}, Scope::kInp);
  Buffer wgt = make_buffer("wgt", int8(), {3, 16, 16}, Scope::kWgt);
  Buffer acc = make_buffer("acc", int32(), {2, 4, 1, 16}, Scope::kAcc);
  Var k = make_var("k"), y = make_var("y"), x = make_var("x");
  Gemm g;
  g.acc = acc;
  g.inp = inp;
  g.wgt = wgt;
  g.acc_index = y * 4 + x;
  g.inp_index = y * 12 + x * 2 + k;
  g.wgt_index = k;
  Stmt body = Allocate::make(
      inp,
      Allocate::make(wgt, Allocate::make(acc, loop(k, 3, loop(y, 2, loop(x, 4, Gemm::make(g)))))));
  Func got = fold_uop_loops(Func{"f", {}, body});
  EXPECT_IR_TEXT(got, R"(func f() {
  alloc inp: int8[4, 6, 1, 16] inp {
    alloc wgt: int8[3, 16, 16] wgt {
      alloc acc: int32[2, 4, 1, 16] acc {
        for (k, 0, 3) {
          gemm acc[0] += inp[k] * wgt[k] loop=(2, 4) acc=(4, 1) inp=(12, 2) wgt=(0, 0)
        }
      }
    }
  }
}
)");
}

TEST(FoldUopLoops, NegativeStrideOrSecondStatementStaysALoop) {
  Buffer acc = make_buffer("acc", int32(), {4, 1, 16}, Scope::kAcc);
  Var i = make_var("i");
  Alu a;
  a.op = isa::AluOp::kMax;
  a.dst = acc;
  a.dst_index = c32(3) - i;
  a.use_imm = true;
  Stmt body = Allocate::make(acc, loop(i, 4, Alu::make(a)));
  Func f{"f", {}, body};
  EXPECT_IR_EQ(fold_uop_loops(f), f);
}

// ---------------------------------------------------------------- insert_dependencies

TEST(InsertDependencies, PipelineInALoopGetsTransitionAndLoopCarriedTokens) {
  Buffer data = make_buffer("data", int8(), {4, 1, 16});
  Buffer out = make_buffer("out", int8(), {4, 1, 16});
  Buffer buf = make_buffer("buf", int8(), {1, 1, 16}, Scope::kInp);
  Buffer w = make_buffer("w", int8(), {1, 16, 16}, Scope::kWgt);
  Buffer acc = make_buffer("acc", int32(), {1, 1, 16}, Scope::kAcc);
  Var i = make_var("i");
  Gemm g;
  g.acc = acc;
  g.inp = buf;
  g.wgt = w;
  g.acc_index = g.inp_index = g.wgt_index = 0;
  Stmt body = Allocate::make(
      buf,
      Allocate::make(
          w,
          Allocate::make(
              acc,
              loop(i, 4,
                   Seq::make({dma(DmaDir::kLoad, isa::MemId::kInp, buf, 0, data, i, 1, 1, 1),
                              Gemm::make(g),
                              dma(DmaDir::kStore, isa::MemId::kOut, acc, 0, out, i, 1, 1, 1)})))));
  Func got = insert_dependencies(Func{"f", {data, out}, body});
  EXPECT_IR_TEXT(got, R"(func f(data: int8[4, 1, 16] global, out: int8[4, 1, 16] global) {
  alloc buf: int8[1, 1, 16] inp {
    alloc w: int8[1, 16, 16] wgt {
      alloc acc: int32[1, 1, 16] acc {
        dep.push store -> compute
        for (i, 0, 4) {
          dep.pop store -> compute
          dep.push compute -> load
          dep.pop compute -> load
          dma.load inp buf[0] <- data[i] y=1 x=1 stride=1 pad=(0, 0, 0, 0)
          dep.push load -> compute
          dep.pop load -> compute
          gemm acc[0] += buf[0] * w[0]
          dep.push compute -> store
          dep.pop compute -> store
          dma.store out out[i] <- acc[0] y=1 x=1 stride=1
          dep.push store -> compute
        }
        dep.pop store -> compute
      }
    }
  }
}
)");
  // The interpreter's token checks accept it, and reject the IR without tokens.
  std::vector<std::vector<int64_t>> args = {std::vector<int64_t>(64, 1), std::vector<int64_t>(64)};
  EXPECT_NO_THROW(interpret(got, args));
  EXPECT_ERROR(interpret(Func{"f", {data, out}, body}, args), "interpret f: race on buffer");
}

}  // namespace
}  // namespace vacc
