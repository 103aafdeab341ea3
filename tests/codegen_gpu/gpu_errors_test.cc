// One case per diagnostic of the GPU backend and its schedules: each names the function (or
// stage), the loop or buffer, and the rule.
#include <gtest/gtest.h>

#include "vacc/codegen/gpu/ptx.h"
#include "vacc/runtime/gpu_device.h"
#include "vacc/schedule/schedule.h"
#include "vacc/support/error.h"
#include "vacc/tir/ops.h"

namespace vacc {
namespace {

using namespace tir;

std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_MESSAGE(call, text) EXPECT_THAT_MESSAGE(error_of([&] { call; }), text)
#define EXPECT_THAT_MESSAGE(msg, text) \
  EXPECT_NE((msg).find(text), std::string::npos) << "message: " << (msg)

Buffer buf(const char *name, int64_t n) {
  return make_buffer(name, float32(), {n});
}

TEST(GpuErrors, StoreOutsideThreadLoops) {
  Buffer y = buf("y", 64);
  Var t = make_var("t");
  Func f{"f",
         {y},
         Seq::make({Store::make(y, {0}, FloatImm::make(float32(), 1)),
                    For::make(t, 64, ForKind::kThreadX,
                              Store::make(y, {t}, FloatImm::make(float32(), 2)))})};
  EXPECT_MESSAGE(codegen::gpu::plan_kernels(f),
                 "GPU backend: f: the store to 'y' lies outside every threadIdx loop");
}

TEST(GpuErrors, ThreadAxisBoundTwiceInOneNest) {
  Buffer y = buf("y", 64);
  Var a = make_var("a"), b = make_var("b");
  Func f{"f",
         {y},
         For::make(a, 8, ForKind::kThreadX,
                   For::make(b, 8, ForKind::kThreadX,
                             Store::make(y, {Expr(a) * 8 + b}, FloatImm::make(float32(), 1))))};
  EXPECT_MESSAGE(codegen::gpu::plan_kernels(f),
                 "loop 'b' binds threadIdx.x inside another loop bound to it");
}

TEST(GpuErrors, TooManyThreads) {
  Buffer y = buf("y", 2048);
  Var t = make_var("t");
  Func f{"f",
         {y},
         For::make(t, 2048, ForKind::kThreadX, Store::make(y, {t}, FloatImm::make(float32(), 1)))};
  EXPECT_MESSAGE(codegen::gpu::plan_kernels(f),
                 "a block of 2048x1x1 = 2048 threads; a block holds at most 1024");
}

TEST(GpuErrors, SharedBufferInsidePhase) {
  Buffer y = buf("y", 64);
  Buffer s = make_buffer("s", float32(), {1}, Scope::kShared);
  Var t = make_var("t");
  Func f{"f",
         {y},
         For::make(t, 64, ForKind::kThreadX, Allocate::make(s, Store::make(y, {t}, load(s, {0}))))};
  EXPECT_MESSAGE(codegen::gpu::plan_kernels(f),
                 "shared buffer 's' is allocated inside a threadIdx loop");
}

TEST(GpuErrors, TooMuchSharedMemory) {
  Buffer y = buf("y", 64);
  Buffer s = make_buffer("s", float32(), {20000}, Scope::kShared);
  Var t = make_var("t");
  Func f{"f",
         {y},
         Allocate::make(s, For::make(t, 64, ForKind::kThreadX, Store::make(y, {t}, load(s, {t}))))};
  EXPECT_MESSAGE(codegen::gpu::plan_kernels(f),
                 "needs 80000 bytes of shared memory; a block has 49152");
}

TEST(GpuErrors, BlockLoopInsideBlock) {
  Buffer y = buf("y", 64);
  Var t = make_var("t"), b = make_var("b");
  Func f{"f",
         {y},
         For::make(t, 8, ForKind::kSerial,
                   For::make(b, 8, ForKind::kBlockX,
                             Store::make(y, {Expr(t) * 8 + b}, FloatImm::make(float32(), 1))))};
  EXPECT_MESSAGE(codegen::gpu::plan_kernels(f),
                 "loop 'b' is bound to blockIdx.x inside a kernel's blocks");
}

TEST(GpuErrors, TooLargeLocalBuffer) {
  Buffer y = buf("y", 64);
  Buffer l = make_buffer("big", float32(), {8192}, Scope::kLocal);
  Var t = make_var("t");
  Func f{"f",
         {y},
         For::make(t, 64, ForKind::kThreadX,
                   Allocate::make(l, Seq::make({Store::make(l, {t}, FloatImm::make(float32(), 1)),
                                                Store::make(y, {t}, load(l, {t}))})))};
  EXPECT_MESSAGE(codegen::gpu::compile(f), "local buffer 'big' takes 32768 bytes per thread");
}

TEST(GpuErrors, Float64Transcendental) {
  Buffer x = make_buffer("x", DataType::float_(64), {64}),
         y = make_buffer("y", DataType::float_(64), {64});
  Var t = make_var("t");
  Func f{"f",
         {x, y},
         For::make(t, 64, ForKind::kThreadX,
                   Store::make(y, {t}, Call::make(CallOp::kExp, {load(x, {t})})))};
  EXPECT_MESSAGE(codegen::gpu::compile(f), "GPU backend: f_k0: exp of float64 has no GPU lowering");
}

TEST(GpuErrors, UnknownArchitecture) {
  Buffer y = buf("y", 64);
  Var t = make_var("t");
  Func f{"f",
         {y},
         For::make(t, 64, ForKind::kThreadX, Store::make(y, {t}, FloatImm::make(float32(), 1)))};
  EXPECT_MESSAGE(codegen::gpu::compile(f, {"sm_90"}),
                 "does not know 'sm_90' (it knows up to sm_86)");
}

TEST(GpuErrors, BindReductionAxis) {
  te::Tensor a = te::placeholder("a", {8, 8}, float32());
  te::Tensor s = te::reduce_sum("s", {8}, {{"k", 8}}, [&](const auto &i, const auto &r) {
    return (*a)({i[0], r[0]});
  });
  schedule::Schedule sch({s});
  EXPECT_MESSAGE(sch[s].bind(sch[s].reduce_axis()[0], "threadIdx.x"),
                 "schedule: stage 's': 'k' is (split from) a reduction axis");
}

TEST(GpuErrors, UnknownGpuAxis) {
  te::Tensor a = te::placeholder("a", {8}, float32());
  te::Tensor c = te::compute("c", {8}, [&](const auto &i) { return (*a)({i[0]}); });
  schedule::Schedule sch({c});
  EXPECT_MESSAGE(sch[c].bind(sch[c].axis()[0], "warp.x"),
                 "cannot bind 'i0' to 'warp.x'; GPU axes are blockIdx.x|y|z and threadIdx.x|y|z");
}

TEST(GpuErrors, NoGpuDevice) {
  std::string msg = error_of([] { runtime::GpuDevice::open(); });
  if (msg == "(no error)") GTEST_SKIP() << "this machine has a GPU: the no-GPU message cannot show";
  EXPECT_THAT_MESSAGE(msg, "no GPU: ");
}

}  // namespace
}  // namespace vacc
