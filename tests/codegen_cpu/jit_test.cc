// The CPU backend on loop IR: every scalar type and node against the loop-IR interpreter or
// plain C++, scheduled loops (vectorize, unroll, parallel, cache_write) against plain C++,
// the kernel cache, and the diagnostics for IR the CPU cannot run.
#include "vacc/codegen/cpu/jit.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "vacc/codegen/cpu/thread_pool.h"
#include "vacc/schedule/schedule.h"
#include "vacc/schedule/to_loop_ir.h"
#include "vacc/support/error.h"
#include "vacc/tir/equal.h"
#include "vacc/tir/interpreter.h"
#include "vacc/tir/ops.h"
#include "vacc/tir/printer.h"

namespace vacc {
namespace {

using codegen::cpu::Jit;
using tir::Expr;

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2, 2);
  std::vector<float> v(n);
  for (float &x : v) x = d(rng);
  return v;
}

// c = a * b + a, elementwise over 1000 floats, split by 16 and vectorized.
TEST(CpuJit, VectorizedElementwiseMatchesCpp) {
  te::Tensor a = te::placeholder("a", {1000}, tir::float32());
  te::Tensor b = te::placeholder("b", {1000}, tir::float32());
  te::Tensor c = te::compute(
      "c", {1000}, [&](const auto &i) { return (*a)({i[0]}) * (*b)({i[0]}) + (*a)({i[0]}); });
  schedule::Schedule s({c});
  auto [o, in] = s[c].split(s[c].axis()[0], 8);
  s[c].vectorize(in);
  tir::Func f = schedule::to_loop_ir(s, "axpy", {a, b, c});
  std::string ir = codegen::cpu::llvm_ir(f, false);
  EXPECT_NE(ir.find("<8 x float>"), std::string::npos) << ir;
  auto va = random_floats(1000, 1), vb = random_floats(1000, 2);
  std::vector<float> vc(1000);
  Jit::global().compile(f)->run({va.data(), vb.data(), vc.data()});
  for (int i = 0; i < 1000; ++i)
    ASSERT_NEAR(vc[i], va[i] * vb[i] + va[i], 1e-5) << i;  // contracted to FMA
}

// A vectorized loop of 56 becomes vectors of 32, 16 and 8 lanes (the backend mangles
// non-power-of-two vectors), with the same results.
TEST(CpuJit, NonPowerOfTwoVectorLoopsArePowerOfTwoPieces) {
  te::Tensor a = te::placeholder("a", {3, 56}, tir::float32());
  te::Tensor c = te::compute("c", {3, 56}, [&](const auto &i) { return (*a)({i[0], i[1]}) * 2; });
  schedule::Schedule s({c});
  s[c].vectorize(s[c].axis()[1]);
  tir::Func f = schedule::to_loop_ir(s, "twice", {a, c});
  std::string ir = codegen::cpu::llvm_ir(f, false);
  for (const char *v : {"<32 x float>", "<16 x float>", "<8 x float>"}) {
    EXPECT_NE(ir.find(v), std::string::npos) << v << "\n" << ir;
  }
  EXPECT_EQ(ir.find("<56 x float>"), std::string::npos) << ir;
  auto va = random_floats(168, 9);
  std::vector<float> vc(168);
  Jit::global().compile(f)->run({va.data(), vc.data()});
  for (int k = 0; k < 168; ++k) ASSERT_EQ(vc[k], va[k] * 2) << k;
}

// Clamping a narrow integer to its own range is the identity (a regression: the simplifier
// once computed the bounds of an int8 difference in int8, and it wrapped).
TEST(CpuJit, NarrowIntegerClampKeepsItsValue) {
  te::Tensor a = te::placeholder("a", {4}, tir::int8());
  te::Tensor c = te::compute("c", {4}, [&](const auto &i) {
    return tir::min(tir::max((*a)({i[0]}), tir::make_const(tir::int8(), -128)),
                    tir::make_const(tir::int8(), 127));
  });
  schedule::Schedule s({c});
  tir::Func f = schedule::to_loop_ir(s, "clamp", {a, c});
  int8_t in[4] = {-128, -1, 0, 127}, out[4] = {};
  Jit::global().compile(f)->run({in, out});
  for (int k = 0; k < 4; ++k) EXPECT_EQ(out[k], in[k]) << tir::to_string(f);
}

// Integer semantics (floor division and modulo, the ISA's shift, wraparound, casts) are the
// interpreter's: the same Func runs on both, over signed operands of both signs.
TEST(CpuJit, IntegerSemanticsMatchTheInterpreter) {
  auto x = tir::make_buffer("x", tir::int32(), {64});
  auto y = tir::make_buffer("y", tir::int32(), {64});
  auto out = tir::make_buffer("out", tir::int32(), {6, 64});
  tir::Var i = tir::make_var("i");
  Expr a = tir::load(x, {i}), b = tir::load(y, {i});
  Expr nz = tir::select(tir::eq(b, 0), tir::make_const(tir::int32(), 7), b);
  std::vector<Expr> values = {
      a / nz,
      a % nz,
      a >> (b % 40 - 20),
      tir::cast(tir::int32(), tir::cast(tir::int8(), a * 37)),
      tir::min(a, b) - tir::max(a, b),
      tir::cast(tir::int32(), tir::cast(tir::DataType::int_(16), a * b * 1000))};
  std::vector<tir::Stmt> stores;
  for (size_t k = 0; k < values.size(); ++k) {
    stores.push_back(tir::Store::make(out, {static_cast<int>(k), i}, values[k]));
  }
  tir::Func f{
      "ints", {x, y, out}, tir::For::make(i, 64, tir::ForKind::kSerial, tir::Seq::make(stores))};
  std::vector<std::vector<int64_t>> args(3);
  std::vector<int32_t> xs(64), ys(64), outs(6 * 64);
  std::mt19937 rng(3);
  for (int k = 0; k < 64; ++k) {
    xs[k] = static_cast<int32_t>(rng() % 2001) - 1000;
    ys[k] = static_cast<int32_t>(rng() % 41) - 20;
    args[0].push_back(xs[k]);
    args[1].push_back(ys[k]);
  }
  args[2].assign(6 * 64, 0);
  tir::interpret(f, args);
  Jit::global().compile(f)->run({xs.data(), ys.data(), outs.data()});
  for (int k = 0; k < 6 * 64; ++k) ASSERT_EQ(outs[k], args[2][k]) << tir::to_string(f) << k;
}

// uint8 and int8 loads widen with the right extension; bool stores are one byte.
TEST(CpuJit, UnsignedSignedAndBool) {
  auto u = tir::make_buffer("u", tir::uint8(), {4});
  auto s = tir::make_buffer("s", tir::int8(), {4});
  auto sum = tir::make_buffer("sum", tir::int32(), {4});
  auto gt = tir::make_buffer("gt", tir::DataType::bool_(), {4});
  tir::Var i = tir::make_var("i");
  Expr uv = tir::cast(tir::int32(), tir::load(u, {i})),
       sv = tir::cast(tir::int32(), tir::load(s, {i}));
  tir::Func f{
      "mixed",
      {u, s, sum, gt},
      tir::For::make(
          i, 4, tir::ForKind::kVectorized,
          tir::Seq::make({tir::Store::make(sum, {i}, uv + sv),
                          tir::Store::make(
                              gt, {i},
                              tir::load(u, {i}) >
                                  tir::cast(tir::uint8(), tir::make_const(tir::int32(), 100)))}))};
  uint8_t us[4] = {0, 100, 200, 255};
  int8_t ss[4] = {-128, -1, 1, 127};
  int32_t sums[4];
  uint8_t gts[4] = {9, 9, 9, 9};
  Jit::global().compile(f)->run({us, ss, sums, gts});
  EXPECT_EQ(sums[0], -128);
  EXPECT_EQ(sums[1], 99);
  EXPECT_EQ(sums[2], 201);
  EXPECT_EQ(sums[3], 382);
  EXPECT_EQ(gts[0], 0);
  EXPECT_EQ(gts[1], 0);
  EXPECT_EQ(gts[2], 1);
  EXPECT_EQ(gts[3], 1);
}

// exp, tanh, round-half-even and saturating float -> int8 casts, vectorized.
TEST(CpuJit, MathCallsAndSaturatingCasts) {
  auto x = tir::make_buffer("x", tir::float32(), {8});
  auto e = tir::make_buffer("e", tir::float32(), {3, 8});
  auto q = tir::make_buffer("q", tir::int8(), {8});
  tir::Var i = tir::make_var("i");
  Expr v = tir::load(x, {i});
  tir::Stmt body = tir::Seq::make({
      tir::Store::make(e, {0, i}, tir::Call::make(tir::CallOp::kExp, {v})),
      tir::Store::make(e, {1, i}, tir::Call::make(tir::CallOp::kTanh, {v})),
      tir::Store::make(e, {2, i}, tir::Call::make(tir::CallOp::kRound, {v})),
      tir::Store::make(q, {i},
                       tir::cast(tir::int8(), v * tir::FloatImm::make(tir::float32(), 100))),
  });
  tir::Func f{"math", {x, e, q}, tir::For::make(i, 8, tir::ForKind::kVectorized, body)};
  float xs[8] = {-3.f, -2.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0.25f, 1.f};
  float es[24];
  int8_t qs[8];
  Jit::global().compile(f)->run({xs, es, qs});
  for (int k = 0; k < 8; ++k) {
    EXPECT_NEAR(es[k], std::exp(xs[k]), 1e-5 * std::exp(xs[k]));
    EXPECT_NEAR(es[8 + k], std::tanh(xs[k]), 1e-6);
    EXPECT_EQ(es[16 + k], std::nearbyint(xs[k])) << xs[k];
    EXPECT_EQ(qs[k], static_cast<int8_t>(std::clamp(xs[k] * 100.f, -128.f, 127.f)));
  }
}

// exp of floats is inline code, not libm (exp_f32.h): against exp in double, rounded to float,
// for every 97th float from -inf to +inf (all exponents, the subnormal results below -87.3 and
// the overflow above 88.7), vectorized by 16 and scalar: within 1 ulp where the result is a
// normal float, within one subnormal step below, +inf and 0 where exp saturates, NaN for NaN.
TEST(CpuJit, ExpOfFloatsIsWithinOneUlpEverywhere) {
  std::vector<float> xs;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 97) {
    const auto b32 = static_cast<uint32_t>(bits);
    float v;
    std::memcpy(&v, &b32, 4);
    if (!std::isnan(v)) xs.push_back(v);
  }
  for (float v : {0.f, -0.f, INFINITY, -INFINITY, NAN, 88.72283f, 88.72284f, -87.33654f, -103.2789f,
                  -103.9721f, -104.f, -150.f, 1e-10f, -1e-10f})
    xs.push_back(v);
  const int64_t n = static_cast<int64_t>(xs.size()) / 16 * 16;
  xs.resize(static_cast<size_t>(n));
  for (bool vectorized : {true, false}) {
    auto x = tir::make_buffer("x", tir::float32(), {n}),
         y = tir::make_buffer("y", tir::float32(), {n});
    tir::Var o = tir::make_var("o"), l = tir::make_var("l");
    const Expr at = Expr(o) * 16 + l;
    tir::Stmt body =
        tir::Store::make(y, {at}, tir::Call::make(tir::CallOp::kExp, {tir::load(x, {at})}));
    body =
        tir::For::make(l, 16, vectorized ? tir::ForKind::kVectorized : tir::ForKind::kSerial, body);
    tir::Func f{vectorized ? "exp16" : "exp1",
                {x, y},
                tir::For::make(o, n / 16, tir::ForKind::kSerial, body)};
    const std::string ir = codegen::cpu::llvm_ir(f, false);
    EXPECT_EQ(ir.find("@llvm.exp"), std::string::npos) << "exp is not inline";
    std::vector<float> ys(static_cast<size_t>(n));
    Jit::global().compile(f)->run({xs.data(), ys.data()});
    double worst = 0;
    for (int64_t k = 0; k < n; ++k) {
      const float v = xs[k], got = ys[k];
      const double want = std::exp(static_cast<double>(v));
      if (std::isnan(v)) {
        ASSERT_TRUE(std::isnan(got)) << v;
        continue;
      }
      const float wantf = static_cast<float>(want);
      if (std::isinf(wantf) || wantf == 0.f) {
        ASSERT_EQ(got, wantf) << "exp(" << v << ")";
        continue;
      }
      if (wantf < FLT_MIN) {  // a subnormal result: within one step of the smallest subnormal
        ASSERT_NEAR(got, want, std::numeric_limits<float>::denorm_min()) << "exp(" << v << ")";
        continue;
      }
      const double ulps = std::abs(got - want) / (std::nextafter(wantf, INFINITY) - wantf);
      worst = std::max(worst, ulps);
      ASSERT_LE(ulps, 1.0) << "exp(" << v << ") = " << got << ", want " << want;
    }
    EXPECT_GT(worst, 0.0);  // the comparison saw inexact results
  }
}

// A Select whose branches read only what its condition reads (Sigmoid's select(x >= 0, f(x),
// g(x)), here over a flat index split by constant divisions) evaluates both branches in
// vacc's own vector code; one whose branch reads another element must keep the branch (that
// element may be padding outside the buffer), and is not vectorized by vacc.
TEST(CpuJit, SelectsOverTheirConditionsLoadsVectorize) {
  auto x = tir::make_buffer("x", tir::float32(), {4, 8, 16}),
       y = tir::make_buffer("y", tir::float32(), {4, 8, 16});
  tir::Var o = tir::make_var("o"), l = tir::make_var("l");
  auto kernel = [&](bool other_element) {
    const Expr at_row = Expr(o) / 8, at_col = Expr(o) % 8;
    const Expr v = tir::load(x, {at_row, at_col, l});
    const Expr w = other_element ? tir::load(x, {(Expr(o) + 1) % 32 / 8, at_col, l}) : v;
    const Expr zero = tir::FloatImm::make(tir::float32(), 0);
    const Expr value = tir::select(v >= zero, w * 2, zero - w);
    return tir::Func{
        other_element ? "sel_other" : "sel_same",
        {x, y},
        tir::For::make(o, 32, tir::ForKind::kSerial,
                       tir::For::make(l, 16, tir::ForKind::kVectorized,
                                      tir::Store::make(y, {at_row, at_col, l}, value)))};
  };
  auto vx = random_floats(512, 21);
  for (bool other : {false, true}) {
    const tir::Func f = kernel(other);
    const std::string ir = codegen::cpu::llvm_ir(f, false);
    EXPECT_EQ(ir.find("<16 x i1>") != std::string::npos, !other) << ir;  // a vector select
    std::vector<float> vy(512);
    Jit::global().compile(f)->run({vx.data(), vy.data()});
    for (int k = 0; k < 512; ++k) {
      const int o_k = k / 16;  // y[k] is iteration o_k's lane k % 16
      const float v = vx[k];
      const float w = other ? vx[(o_k + 1) % 32 / 8 * 128 + o_k % 8 * 16 + k % 16] : v;
      ASSERT_EQ(vy[k], v >= 0 ? w * 2 : 0 - w) << k;
    }
  }
}

// A guarded (padding) load never touches memory outside the buffer.
TEST(CpuJit, GuardedLoadsStayInBounds) {
  te::Tensor a = te::placeholder("a", {10}, tir::float32());
  te::Tensor p = te::compute("p", {14}, [&](const auto &i) { return (*a)({i[0] - 2}); });
  schedule::Schedule s({p});
  tir::Func f = schedule::to_loop_ir(s, "pad", {a, p});
  std::vector<float> va = random_floats(10, 4), vp(14, 7.f);
  Jit::global().compile(f)->run({va.data(), vp.data()});
  for (int k = 0; k < 14; ++k) EXPECT_EQ(vp[k], k < 2 || k >= 12 ? 0.f : va[k - 2]);
}

// A prefetch is a hint: the CPU backend emits llvm.prefetch (the next row of the input, read
// while this one is copied), the interpreter skips it, and neither result changes; the printer
// and structural equality see its buffer and address.
TEST(CpuJit, PrefetchIsAHintThatChangesNoValue) {
  tir::Var i = tir::make_var("i"), j = tir::make_var("j");
  // c[i, :] = a[i, :] * 3, prefetching a[i + ahead, 0] before each row.
  auto copy3 = [&](tir::DataType t, int ahead) {
    auto a = tir::make_buffer("a", t, {8, 32}), c = tir::make_buffer("c", t, {8, 32});
    const tir::Stmt row = tir::For::make(j, 32, tir::ForKind::kSerial,
                                         tir::Store::make(c, {i, j}, tir::load(a, {i, j}) * 3));
    return tir::Func{
        "copy3",
        {a, c},
        tir::For::make(i, 8, tir::ForKind::kSerial,
                       tir::Seq::make({tir::Prefetch::make(a, {Expr(i) + ahead, 0}), row}))};
  };
  const tir::Func f = copy3(tir::float32(), 1);
  EXPECT_NE(tir::to_string(f).find("prefetch a[i + 1, 0]"), std::string::npos) << tir::to_string(f);
  EXPECT_TRUE(tir::structural_equal(f.body, copy3(tir::float32(), 1).body, true));
  EXPECT_FALSE(tir::structural_equal(f.body, copy3(tir::float32(), 2).body, true));
  const std::string ir = codegen::cpu::llvm_ir(f, false);
  EXPECT_NE(ir.find("@llvm.prefetch"), std::string::npos) << ir;
  auto va = random_floats(256, 11);
  std::vector<float> vc(256);
  Jit::global().compile(f)->run({va.data(), vc.data()});
  for (int k = 0; k < 256; ++k) ASSERT_EQ(vc[k], va[k] * 3) << k;
  std::vector<std::vector<int64_t>> args(2);
  for (int k = 0; k < 256; ++k) args[0].push_back(k - 100);
  args[1].assign(256, 0);
  tir::interpret(copy3(tir::int32(), 1), args);
  for (int k = 0; k < 256; ++k) ASSERT_EQ(args[1][k], (k - 100) * 3) << k;
}

// A matmul scheduled as a CPU kernel: parallel rows, a local accumulator tile (cache_write),
// unrolled rows and vectorized columns inside it.
TEST(CpuJit, ScheduledMatmulMatchesCpp) {
  const int M = 37, N = 64, K = 29;
  te::Tensor a = te::placeholder("a", {M, K}, tir::float32());
  te::Tensor b = te::placeholder("b", {K, N}, tir::float32());
  te::Tensor c = te::reduce_sum("c", {M, N}, {{"k", K}}, [&](const auto &v, const auto &r) {
    return (*a)({v[0], r[0]}) * (*b)({r[0], v[1]});
  });
  schedule::Schedule s({c});
  te::Tensor cl = s.cache_write(c, tir::Scope::kLocal);
  auto &sc = s[c];
  auto t = sc.tile(sc.axis()[0], sc.axis()[1], 4, 16);
  sc.parallel(t[0]);
  sc.vectorize(t[3]);
  auto &sl = s[cl];
  sl.compute_at(sc, t[1]);
  const auto &ax = sl.axis();
  sl.reorder({sl.reduce_axis()[0], ax[0], ax[1]});
  sl.unroll(ax[0]);
  sl.vectorize(ax[1]);
  tir::Func f = schedule::to_loop_ir(s, "matmul", {a, b, c});
  auto va = random_floats(M * K, 5), vb = random_floats(K * N, 6);
  std::vector<float> vc(M * N);
  Jit::global().compile(f)->run({va.data(), vb.data(), vc.data()});
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float want = 0;
      for (int k = 0; k < K; ++k) want += va[i * K + k] * vb[k * N + j];
      ASSERT_NEAR(vc[i * N + j], want, 1e-4) << i << "," << j << "\n" << tir::to_string(f);
    }
  }
}

TEST(CpuJit, StructurallyEqualKernelsCompileOnce) {
  auto make = [](const std::string &name) {
    te::Tensor a = te::placeholder(name + "_a", {33}, tir::float32());
    te::Tensor c = te::compute(name + "_c", {33}, [&](const auto &i) { return (*a)({i[0]}) * 2; });
    schedule::Schedule s({c});
    return schedule::to_loop_ir(s, name, {a, c});
  };
  tir::Func f1 = make("first"), f2 = make("second");
  EXPECT_EQ(tir::structural_hash(f1), tir::structural_hash(f2));
  auto before = Jit::global().stats();
  auto k1 = Jit::global().compile(f1);
  auto k2 = Jit::global().compile(f2);
  auto after = Jit::global().stats();
  EXPECT_EQ(k1.get(), k2.get());
  EXPECT_EQ(after.compiled - before.compiled, 1);
  EXPECT_EQ(after.cache_hits - before.cache_hits, 1);
  // A different constant is a different kernel.
  te::Tensor a = te::placeholder("a", {33}, tir::float32());
  te::Tensor c = te::compute("c", {33}, [&](const auto &i) { return (*a)({i[0]}) * 3; });
  schedule::Schedule s({c});
  tir::Func f3 = schedule::to_loop_ir(s, "third", {a, c});
  EXPECT_NE(tir::structural_hash(f1), tir::structural_hash(f3));
  EXPECT_NE(Jit::global().compile(f3).get(), k1.get());
}

TEST(CpuJit, ThreadPoolCoversTheRangeOnce) {
  std::vector<int> hits(1001, 0);
  codegen::cpu::parallel_for(1001, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) ++hits[i];
  });
  for (int h : hits) ASSERT_EQ(h, 1);
}

// A parallel loop inside a parallel loop runs (serially inside) instead of deadlocking.
TEST(CpuJit, NestedParallelLoops) {
  auto out = tir::make_buffer("out", tir::int32(), {6, 5});
  tir::Var i = tir::make_var("i"), j = tir::make_var("j");
  tir::Stmt body = tir::For::make(
      i, 6, tir::ForKind::kParallel,
      tir::For::make(j, 5, tir::ForKind::kParallel, tir::Store::make(out, {i, j}, i * 10 + j)));
  tir::Func f{"nested", {out}, body};
  std::vector<int32_t> v(30, -1);
  Jit::global().compile(f)->run({v.data()});
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 5; ++b) EXPECT_EQ(v[a * 5 + b], a * 10 + b);
}

TEST(CpuJitError, AcceleratorStatementsAreRejected) {
  tir::Func f{"accel", {}, tir::DepPush::make(isa::Engine::kLoad, isa::Engine::kCompute)};
  try {
    Jit::global().compile(f);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("accel: DepPush is an accelerator statement"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace vacc
