// End to end: dense and conv2d with bias, ReLU and shift-and-clip requantization, scheduled
// for the accelerator with 1 and 2 virtual threads, lowered through every pass; the
// interpreter's result of the final IR (intrinsics, scratchpad arenas, token checks) must
// equal a plain C++ reference on random data, for the default, small and wide configs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "reference.h"
#include "vacc/lower/operators.h"
#include "vacc/lower/lower.h"
#include "vacc/tir/interpreter.h"
#include "vacc/tir/printer.h"

namespace vacc {
namespace {

isa::HwConfig config(const std::string &name) {
  return isa::load_config(std::string(VACC_SOURCE_DIR) + "/configs/" + name + ".yaml");
}

struct Case {
  std::string config;
  lower::Conv2dParams conv;
  lower::AccelSchedule sched;
};

std::vector<int64_t> run_final(const lower::Operator &op, const isa::HwConfig &c,
                               std::vector<std::vector<int64_t>> args, tir::InterpStats *stats) {
  // Every intermediate IR must compute the same result as the final one.
  std::vector<int64_t> first;
  {
    auto a = args;
    tir::InterpOptions o;
    o.check_tokens = false;
    tir::interpret(op.func, a, o);
    first = a.back();
  }
  lower::LowerOptions po;
  po.after_loop_pass = [&](const std::string &name, const tir::Func &f) {
    auto a = args;
    tir::InterpOptions o;
    o.config = &c;
    o.check_tokens = false;  // tokens are derived on the command list (below)
    tir::interpret(f, a, o);
    EXPECT_EQ(a.back(), first) << "after pass " << name;
  };
  tir::Func final_ir = lower::lower_loops(op.func, c, po);
  tir::InterpOptions o;
  o.config = &c;
  o.check_tokens = false;
  *stats = tir::interpret(final_ir, args, o);
  // The command list's tokens, derived from its scratchpad conflicts, are checked by the
  // command-list verifier: every two engines touching one tile are ordered by a token.
  const isa::CommandList list = lower::generate_commands(final_ir, c);
  for (const isa::Command &cmd : list.commands)
    if (const auto *d = std::get_if<isa::DepCommand>(&cmd)) stats->pushes += d->push;
  return args.back();
}

void check_conv(const std::string &cfg, lower::Conv2dParams p, lower::AccelSchedule s,
                uint32_t seed) {
  isa::HwConfig c = config(cfg);
  lower::Operator op = lower::define(c, p, s);
  std::vector<std::vector<int64_t>> args;
  for (size_t i = 0; i < op.args.size(); ++i) {
    int64_t n = op.args[i]->buffer->elems();
    if (i == 2) {
      args.push_back(test::random_values(n, -2000, 2000, seed + i));
    } else if (i == 3) {
      args.emplace_back(n, test::kPoison);
    } else {
      args.push_back(test::random_values(n, -128, 127, seed + i));
    }
  }
  // The shift is picked from the data so that nearly no output clamps.
  p.requant.shift =
      test::fitting_shift(test::conv2d_accumulators(c, p, args[0], args[1], args[2]), c.inp_bits);
  op = lower::define(c, p, s);
  auto want = test::conv2d_reference(c, p, args[0], args[1], args[2]);
  tir::InterpStats st;
  auto got = run_final(op, c, args, &st);
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
  EXPECT_EQ(bad, 0u) << cfg << ": " << bad << " of " << got.size() << " outputs differ";
  EXPECT_GT(st.gemms, 0);
  EXPECT_GT(st.alus, 0);
  EXPECT_GT(st.dma_stores, 0);
  if (s.vthreads > 1) EXPECT_GT(st.pushes, 0);
}

TEST(E2E, Conv3x3Pad1AllConfigsOneAndTwoThreads) {
  for (const char *cfg : {"default", "small", "wide"}) {
    isa::HwConfig c = config(cfg);
    for (int vt : {1, 2}) {
      lower::Conv2dParams p;
      p.in_channels = 2 * c.block_in;
      p.out_channels = 4 * c.block_out;
      p.height = p.width = 8;
      lower::AccelSchedule s;
      s.tile_h = 4;
      s.tile_w = 4;
      s.tile_oc = 1;
      s.tile_ic = 1;
      s.vthreads = vt;
      SCOPED_TRACE(std::string(cfg) + " vthreads=" + std::to_string(vt));
      check_conv(cfg, p, s, 17 + vt);
    }
  }
}

TEST(E2E, ConvStrideAndKernelShapes) {
  isa::HwConfig c = config("default");
  struct Shape {
    int64_t kh, kw, sh, sw, ph, pw, h, w;
  };
  for (Shape sh : {Shape{1, 1, 1, 1, 0, 0, 6, 6}, Shape{3, 3, 2, 2, 1, 1, 9, 9},
                   Shape{5, 3, 1, 2, 2, 0, 7, 8}, Shape{7, 7, 2, 2, 3, 3, 12, 12}}) {
    lower::Conv2dParams p;
    p.in_channels = c.block_in;
    p.out_channels = 2 * c.block_out;
    p.kernel_h = sh.kh;
    p.kernel_w = sh.kw;
    p.stride_h = sh.sh;
    p.stride_w = sh.sw;
    p.pad_h = sh.ph;
    p.pad_w = sh.pw;
    p.height = sh.h;
    p.width = sh.w;
    p.requant = {6, false};
    lower::AccelSchedule s;
    s.tile_h = p.out_height() % 2 == 0 ? 2 : 1;
    s.tile_w = p.out_width();
    s.vthreads = 2;
    SCOPED_TRACE(fmt::format("k{}x{} s{}x{} p{}x{}", sh.kh, sh.kw, sh.sh, sh.sw, sh.ph, sh.pw));
    check_conv("default", p, s, 5);
  }
}

TEST(E2E, ConvPartialOutputTiles) {
  // 7x7 output with 3x3 tiles: the last row/column of tiles is partial.
  lower::Conv2dParams p;
  p.height = p.width = 7;
  p.in_channels = 16;
  p.out_channels = 32;
  lower::AccelSchedule s;
  s.tile_h = 3;
  s.tile_w = 3;
  check_conv("default", p, s, 9);
}

TEST(E2E, DenseAllConfigsOneAndTwoThreads) {
  for (const char *cfg : {"default", "small", "wide"}) {
    isa::HwConfig c = config(cfg);
    for (int vt : {1, 2}) {
      lower::DenseParams p;
      p.batch = 2 * c.batch;
      p.in_features = 4 * c.block_in;
      p.out_features = 4 * c.block_out;
      p.requant = {5, vt == 1};
      lower::AccelSchedule s;
      s.tile_h = 2;  // both row blocks in one tile, sharing the weight loads
      s.tile_oc = 1;
      s.tile_ic = 2;
      s.vthreads = vt;
      lower::Operator op = lower::define(c, p, s);
      std::vector<std::vector<int64_t>> args;
      for (size_t i = 0; i < 4; ++i) {
        int64_t n = op.args[i]->buffer->elems();
        args.push_back(i == 3   ? std::vector<int64_t>(n, test::kPoison)
                       : i == 2 ? test::random_values(n, -3000, 3000, 40 + i)
                                : test::random_values(n, -128, 127, 30 + i));
      }
      p.requant.shift = test::fitting_shift(
          test::dense_accumulators(c, p, args[0], args[1], args[2]), c.inp_bits);
      op = lower::define(c, p, s);
      auto want = test::dense_reference(c, p, args[0], args[1], args[2]);
      tir::InterpStats st;
      auto got = run_final(op, c, args, &st);
      EXPECT_EQ(got, want) << cfg << " vthreads=" << vt;
    }
  }
}

}  // namespace
}  // namespace vacc
