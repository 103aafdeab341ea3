// Launch plans as IR: the dense schedule's kernel (shared tiles, private accumulators,
// barriers) as text, and privatization and barrier insertion on hand-written phases compared
// structurally with the expected IR.
#include <gtest/gtest.h>

#include "vacc/codegen/gpu/ptx.h"
#include "vacc/ops/gpu/ops.h"
#include "vacc/tir/equal.h"
#include "vacc/tir/ops.h"
#include "vacc/tir/printer.h"

namespace vacc {
namespace {

using namespace tir;

::testing::AssertionResult same(const Func &got, const Func &want) {
  if (structural_equal(got, want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "--- got\n"
                                       << to_string(got) << "--- want\n"
                                       << to_string(want);
}

Stmt barrier() {
  return Attr::make("gpu", "barrier", Seq::make({}));
}

// 64x64 outputs, k = 32: one block of 16x16 threads with 4x4 accumulators each (the block's
// accumulator made private: acc[4, 4] per thread), two steps of 16 over k, the a and b tiles
// loaded cooperatively into shared memory, a barrier before the loads (the previous step's
// readers) and one before the products (the loads). (A grid of 1x1 leaves the block indices,
// zero, in the indices.)
TEST(GpuPlan, DenseKernelText) {
  codegen::gpu::Module m = codegen::gpu::plan_kernels(ops::gpu::dense(64, 64, 32, false, false));
  ASSERT_EQ(m.kernels.size(), 1u);
  const codegen::gpu::Kernel &k = m.kernels[0];
  EXPECT_EQ(k.grid, (std::array<int64_t, 3>{1, 1, 1}));
  EXPECT_EQ(k.block, (std::array<int64_t, 3>{16, 16, 1}));
  EXPECT_EQ(k.shared_bytes, 2 * 64 * 16 * 4);
  EXPECT_EQ(
      to_string(k.func),
      R"(func dense_k0(a: float32[64, 32] global, b: float32[32, 64] global, y: float32[64, 64] global) {
  blockIdx.y (i0.o, 0, 1) {
    blockIdx.x (i1.o, 0, 1) {
      alloc acc: float32[4, 4] local {
        threadIdx.y (i0.o_1, 0, 16) {
          threadIdx.x (i1.o_1, 0, 16) {
            unroll (i0.i, 0, 4) {
              unroll (i1.i, 0, 4) {
                acc[i0.i, i1.i] = 0f
              }
            }
          }
        }
        for (rk.o, 0, 2) {
          alloc a.shared: float32[64, 16] shared {
            alloc b.shared: float32[16, 64] shared {
              attr gpu = "barrier"
              threadIdx.y (i0.i1.f.i.o, 0, 16) {
                threadIdx.x (i0.i1.f.i.i, 0, 16) {
                  for (i0.i1.f.o, 0, 4) {
                    a.shared[i0.i1.f.o * 16 + i0.i1.f.i.o, i0.i1.f.i.i] = a[i0.i1.f.o * 16 + i0.i1.f.i.o, rk.o * 16 + i0.i1.f.i.i]
                  }
                }
              }
              threadIdx.y (i0.i1.f.i.o_1, 0, 16) {
                threadIdx.x (i0.i1.f.i.i_1, 0, 16) {
                  for (i0.i1.f.o_1, 0, 4) {
                    b.shared[(i0.i1.f.o_1 * 256 + i0.i1.f.i.o_1 * 16 + i0.i1.f.i.i_1) / 64, (i0.i1.f.o_1 * 256 + i0.i1.f.i.o_1 * 16 + i0.i1.f.i.i_1) % 64] = b[rk.o * 16 + (i0.i1.f.o_1 * 256 + i0.i1.f.i.o_1 * 16 + i0.i1.f.i.i_1) / 64, (i0.i1.f.o_1 * 256 + i0.i1.f.i.o_1 * 16 + i0.i1.f.i.i_1) % 64]
                  }
                }
              }
              attr gpu = "barrier"
              threadIdx.y (i0.o_1, 0, 16) {
                threadIdx.x (i1.o_1, 0, 16) {
                  for (rk.i, 0, 16) {
                    unroll (i0.i, 0, 4) {
                      unroll (i1.i, 0, 4) {
                        acc[i0.i, i1.i] = acc[i0.i, i1.i] + a.shared[i0.o_1 * 4 + i0.i, rk.i] * b.shared[rk.i, i1.o_1 * 4 + i1.i]
                      }
                    }
                  }
                }
              }
            }
          }
        }
        threadIdx.y (i0.i.o, 0, 16) {
          threadIdx.x (i1.i.o, 0, 16) {
            unroll (i0.i.i, 0, 4) {
              unroll (i1.i.i, 0, 4) {
                y[i0.o * 64 + i0.i.o * 4 + i0.i.i, i1.o * 64 + i1.i.o * 4 + i1.i.i] = acc[i0.o * 64 + i0.i.i, i1.o * 64 + i1.i.i]
              }
            }
          }
        }
      }
    }
  }
}
)");
}

// A local buffer written by one phase and read by the next at the thread's own index becomes
// one element per thread; no barrier is needed (nothing shared, the global accesses disjoint
// by buffer).
TEST(GpuPlan, OwnSliceBecomesPrivate) {
  Buffer x = make_buffer("x", float32(), {64}), y = make_buffer("y", float32(), {64});
  Buffer t = make_buffer("t", float32(), {32}, Scope::kLocal);
  Var b = make_var("b"), t1 = make_var("t1"), t2 = make_var("t2");
  auto before = Func{
      "f",
      {x, y},
      For::make(
          b, 2, ForKind::kBlockX,
          Allocate::make(
              t, Seq::make({For::make(t1, 32, ForKind::kThreadX,
                                      Store::make(t, {t1}, load(x, {Expr(b) * 32 + t1}))),
                            For::make(t2, 32, ForKind::kThreadX,
                                      Store::make(y, {Expr(b) * 32 + t2}, load(t, {t2}) * 2))})))};
  Buffer p = make_buffer("t", float32(), {1}, Scope::kLocal);
  auto want = Func{
      "f_k0",
      {x, y},
      For::make(
          b, 2, ForKind::kBlockX,
          Allocate::make(
              p, Seq::make({For::make(t1, 32, ForKind::kThreadX,
                                      Store::make(p, {0}, load(x, {Expr(b) * 32 + t1}))),
                            For::make(t2, 32, ForKind::kThreadX,
                                      Store::make(y, {Expr(b) * 32 + t2}, load(p, {0}) * 2))})))};
  codegen::gpu::Module m = codegen::gpu::plan_kernels(before);
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_TRUE(same(m.kernels[0].func, want));
  EXPECT_EQ(m.kernels[0].shared_bytes, 0);
}

// Read at another thread's index, the buffer is the block's: it moves to shared memory and a
// barrier separates the phases.
TEST(GpuPlan, CrossThreadBufferIsSharedWithBarrier) {
  Buffer x = make_buffer("x", float32(), {32}), y = make_buffer("y", float32(), {32});
  Buffer t = make_buffer("t", float32(), {32}, Scope::kLocal);
  Var t1 = make_var("t1"), t2 = make_var("t2");
  Stmt write = For::make(t1, 32, ForKind::kThreadX, Store::make(t, {t1}, load(x, {t1})));
  auto before =
      Func{"f",
           {x, y},
           Allocate::make(
               t, Seq::make({write, For::make(t2, 32, ForKind::kThreadX,
                                              Store::make(y, {t2}, load(t, {31 - Expr(t2)})))}))};
  Buffer s = make_buffer("t", float32(), {32}, Scope::kShared);
  auto want = Func{
      "f_k0",
      {x, y},
      Allocate::make(
          s, Seq::make({For::make(t1, 32, ForKind::kThreadX, Store::make(s, {t1}, load(x, {t1}))),
                        barrier(),
                        For::make(t2, 32, ForKind::kThreadX,
                                  Store::make(y, {t2}, load(s, {31 - Expr(t2)})))}))};
  codegen::gpu::Module m = codegen::gpu::plan_kernels(before);
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_TRUE(same(m.kernels[0].func, want));
  EXPECT_EQ(m.kernels[0].shared_bytes, 128);
}

// Two top-level nests are two launches; a top-level allocation is a device temporary passed
// to both.
TEST(GpuPlan, NestsAreLaunchesOverTemporaries) {
  Buffer x = make_buffer("x", float32(), {256}), y = make_buffer("y", float32(), {256});
  Buffer tmp = make_buffer("tmp", float32(), {256}, Scope::kLocal);
  Var b1 = make_var("b1"), t1 = make_var("t1"), b2 = make_var("b2"), t2 = make_var("t2");
  auto flat = [](Var b, Var t, Buffer out, Expr v) {
    return For::make(
        b, 2, ForKind::kBlockX,
        For::make(t, 128, ForKind::kThreadX, Store::make(out, {Expr(b) * 128 + t}, v)));
  };
  Func f{"two",
         {x, y},
         Allocate::make(
             tmp, Seq::make({flat(b1, t1, tmp,
                                  load(x, {Expr(b1) * 128 + t1}) + FloatImm::make(float32(), 1)),
                             flat(b2, t2, y, load(tmp, {Expr(b2) * 128 + t2}) * 3)}))};
  codegen::gpu::Module m = codegen::gpu::plan_kernels(f);
  ASSERT_EQ(m.kernels.size(), 2u);
  ASSERT_EQ(m.buffers.size(), 3u);
  EXPECT_EQ(m.buffers[2]->scope, Scope::kGlobal);
  EXPECT_EQ(m.kernels[0].args, (std::vector<int>{0, 2}));  // x, tmp
  EXPECT_EQ(m.kernels[1].args, (std::vector<int>{1, 2}));  // y, tmp
  EXPECT_EQ(m.kernels[1].grid, (std::array<int64_t, 3>{2, 1, 1}));
  EXPECT_EQ(m.kernels[1].block, (std::array<int64_t, 3>{128, 1, 1}));
}

}  // namespace
}  // namespace vacc
