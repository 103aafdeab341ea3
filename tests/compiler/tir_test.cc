// The loop IR's own machinery: printer, structural equality, simplifier, and the
// interpreter's intrinsic semantics against hand-computed values from isa/README.md.
#include <gtest/gtest.h>

#include "../expect_error.h"
#include "ir_test_util.h"
#include "vacc/support/error.h"
#include "vacc/tir/arith.h"
#include "vacc/tir/interpreter.h"

namespace vacc {
namespace {

using namespace tir;
using test::c32;
using test::loop;

TEST(Printer, SameNamesGetSuffixesInOrderOfAppearance) {
  Var a = make_var("i"), b = make_var("i");
  Buffer buf = make_buffer("x", int32(), {4, 4});
  Stmt s = loop(a, 4, loop(b, 4, Store::make(buf, {a, b}, a * 4 + b)));
  EXPECT_EQ(to_string(s),
            "for (i, 0, 4) {\n  for (i_1, 0, 4) {\n    x[i, i_1] = i * 4 + i_1\n  }\n}\n");
}

TEST(StructuralEqual, BoundVariablesCorrespondFreeOnesMustBeIdentical) {
  Buffer buf = make_buffer("x", int32(), {4});
  Var a = make_var("a"), b = make_var("b"), f = make_var("f"), g = make_var("f");
  EXPECT_TRUE(
      structural_equal(loop(a, 4, Store::make(buf, {a}, a)), loop(b, 4, Store::make(buf, {b}, b))));
  EXPECT_FALSE(
      structural_equal(loop(a, 4, Store::make(buf, {a}, a)), loop(b, 3, Store::make(buf, {b}, b))));
  EXPECT_FALSE(structural_equal(Expr(f) + 1, Expr(g) + 1));
  EXPECT_TRUE(structural_equal(Expr(f) + 1, Expr(g) + 1, /*map_free=*/true));
}

TEST(Simplify, AffineSplitArithmeticFolds) {
  Var o = make_var("o"), i = make_var("i");
  RangeMap r = {{o.get(), {0, 3}}, {i.get(), {0, 15}}};
  EXPECT_EQ(to_string(simplify((Expr(o) * 16 + i) / 16, r)), "o");
  EXPECT_EQ(to_string(simplify((Expr(o) * 16 + i) % 16, r)), "i");
  EXPECT_EQ(to_string(simplify(Expr(i) + o * 2 - i + 3, r)), "o * 2 + 3");
  EXPECT_TRUE(can_prove(Expr(o) * 16 + i < 64, r));
  EXPECT_FALSE(can_prove(Expr(o) * 16 + i < 63, r));
  EXPECT_EQ(to_string(simplify(min(Expr(i), 20), r)), "i");
}

// Runs one intrinsic statement on acc-scope buffers given as parameters via a DMA round trip.
TEST(Interpreter, AluFollowsTheIsaIncludingNegativeShiftAndWraparound) {
  Buffer dram = make_buffer("d", int32(), {2, 1, 4});
  Buffer acc = make_buffer("acc", int32(), {2, 1, 4}, Scope::kAcc);
  auto run = [&](isa::AluOp op, bool imm, int64_t v, std::vector<int64_t> in) {
    Dma l;
    l.dir = DmaDir::kLoad;
    l.mem = isa::MemId::kAcc;
    l.sram = acc;
    l.dram = dram;
    l.sram_index = l.dram_index = 0;
    l.y_size = 1;
    l.x_size = l.x_stride = 2;
    l.pad_top = l.pad_bottom = l.pad_left = l.pad_right = 0;
    Alu a;
    a.op = op;
    a.dst = acc;
    a.dst_index = 0;
    a.use_imm = imm;
    a.imm = v;
    if (!imm) {
      a.src = acc;
      a.src_index = 1;
    }
    // Store back through an acc-typed DRAM image: read acc directly with a scalar copy.
    Var k = make_var("k");
    Buffer res = make_buffer("r", int32(), {4});
    Stmt body =
        Allocate::make(acc, Seq::make({Dma::make(l), Alu::make(a),
                                       loop(k, 4, Store::make(res, {k}, load(acc, {0, 0, k})))}));
    std::vector<std::vector<int64_t>> args = {in, std::vector<int64_t>(4)};
    interpret(Func{"alu", {dram, res}, body}, args);
    return args[1];
  };
  std::vector<int64_t> in = {-7, 5, 100, INT32_MAX, 1, -1, 2, 40};
  EXPECT_EQ(run(isa::AluOp::kShr, false, 0, in), (std::vector<int64_t>{-4, 10, 25, 0}));
  EXPECT_EQ(run(isa::AluOp::kAdd, true, 1, in), (std::vector<int64_t>{-6, 6, 101, INT32_MIN}));
  EXPECT_EQ(run(isa::AluOp::kMax, true, 0, in), (std::vector<int64_t>{0, 5, 100, INT32_MAX}));
  EXPECT_EQ(run(isa::AluOp::kMin, false, 0, in), (std::vector<int64_t>{-7, -1, 2, 40}));
  EXPECT_EQ(run(isa::AluOp::kMul, true, -2, in), (std::vector<int64_t>{14, -10, -200, 2}));
  EXPECT_EQ(run(isa::AluOp::kShr, true, 40, in), (std::vector<int64_t>{-1, 0, 0, 0}));
}

TEST(Interpreter, DmaPadsWithZerosAndStoreTruncates) {
  Buffer data = make_buffer("data", int8(), {2, 2, 1, 1});
  Buffer out = make_buffer("out", int8(), {3, 3, 1, 1});
  Buffer acc = make_buffer("acc", int32(), {3, 3, 1, 1}, Scope::kAcc);
  Buffer dram_acc = make_buffer("dacc", int32(), {2, 2, 1, 1});
  Dma l;
  l.dir = DmaDir::kLoad;
  l.mem = isa::MemId::kAcc;
  l.sram = acc;
  l.dram = dram_acc;
  l.sram_index = l.dram_index = 0;
  l.y_size = l.x_size = l.x_stride = 2;
  l.pad_top = 1;
  l.pad_left = 0;
  l.pad_bottom = 0;
  l.pad_right = 1;
  Dma s;
  s.dir = DmaDir::kStore;
  s.mem = isa::MemId::kOut;
  s.sram = acc;
  s.dram = out;
  s.sram_index = s.dram_index = 0;
  s.y_size = s.x_size = s.x_stride = 3;
  s.pad_top = s.pad_bottom = s.pad_left = s.pad_right = 0;
  Stmt body = Allocate::make(acc, Seq::make({Dma::make(l), Dma::make(s)}));
  std::vector<std::vector<int64_t>> args = {
      {1, 2, 3, 4}, std::vector<int64_t>(9, 7), {300, -1, 128, 5}};
  // Without tokens between the load (compute engine, ACC) and the store the race checker objects.
  EXPECT_ERROR(interpret(Func{"dma", {data, out, dram_acc}, body}, args),
               "interpret dma: race on buffer 'acc'");
  InterpOptions o;
  o.check_tokens = false;
  interpret(Func{"dma", {data, out, dram_acc}, body}, args, o);
  // Row 0 is padding; column 2 is padding; 300 truncates to 44, 128 to -128.
  EXPECT_EQ(args[1], (std::vector<int64_t>{0, 0, 0, 44, -1, 0, -128, 5, 0}));
}

TEST(Interpreter, OutOfBoundsAccessIsAnError) {
  Buffer b = make_buffer("b", int32(), {4});
  Var i = make_var("i");
  Func f{"oob", {b}, loop(i, 5, Store::make(b, {i}, i))};
  std::vector<std::vector<int64_t>> args = {std::vector<int64_t>(4)};
  EXPECT_ERROR(interpret(f, args),
               "interpret oob: index 4 of dimension 0 of buffer 'b' is out of bounds [0, 4)");
}

}  // namespace
}  // namespace vacc
