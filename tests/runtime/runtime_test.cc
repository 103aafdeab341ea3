// The runtime: device memory allocation, and command streams (micro-op residency, token
// merging, double buffering) run on every engine and compared with a plain C++ reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "../expect_error.h"
#include "../test_data.h"
#include "program_kit.h"
#include "vacc/runtime/session.h"
#include "vacc/support/error.h"

namespace vacc::runtime {
namespace {

using isa::AluOp;
using isa::Engine;
using isa::MemId;

TEST(DeviceMemory, AllocatesFirstFitAndCoalesces) {
  DeviceMemory m(4096, 64);
  const DeviceBuffer a = m.allocate(100, "a"), b = m.allocate(64, "b"), c = m.allocate(1, "c");
  EXPECT_EQ(a.offset, 0u);
  EXPECT_EQ(b.offset, 128u);
  EXPECT_EQ(c.offset, 192u);
  EXPECT_EQ(m.used(), 256u);
  m.release(a);
  m.release(b);
  const DeviceBuffer d = m.allocate(192, "d");  // fits the coalesced hole of a and b
  EXPECT_EQ(d.offset, 0u);
  EXPECT_EQ(m.high_water(), 256u);
  try {
    m.allocate(8192, "the weights of conv1");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("cannot allocate 8192 bytes for the weights of conv1"),
              std::string::npos)
        << e.what();
  }
}

// C = clip((A * W^T) >> shift, -128, 127) with A: mt x kt tiles, W: nt x kt tiles.
struct Matmul {
  uint32_t mt, kt, nt;
  int shift;
  std::vector<uint8_t> a, w;
  // A * W^T before the shift and clip.
  std::vector<int64_t> sums(const isa::HwConfig &c) const {
    return test::tiled_product(c, a, w, mt, nt, kt);
  }
  std::vector<int8_t> reference(const isa::HwConfig &c) const {
    std::vector<int8_t> out;
    for (int64_t sum : sums(c))
      out.push_back(static_cast<int8_t>(std::clamp<int64_t>(sum >> shift, -128, 127)));
    return out;
  }
};

// Runs the matmul one row of tiles at a time with `slots` buffers (2 = double buffering),
// synchronized the way the compiler's virtual threads are: compute frees input slots to load,
// store frees accumulator slots to compute.
driver::Counters run_matmul(Session &s, const Matmul &mm, int slots, std::vector<int8_t> &out) {
  const isa::HwConfig &c = s.config();
  const auto da = s.allocate(mm.a.size(), "A"), dw = s.allocate(mm.w.size(), "W");
  const auto dc = s.allocate(size_t{mm.mt} * mm.nt * c.out_tile_bytes(), "C");
  s.write(da, mm.a.data(), mm.a.size());
  s.write(dw, mm.w.data(), mm.w.size());
  const std::vector<uint8_t> poison(dc.bytes, static_cast<uint8_t>(test::kPoison));
  s.write(dc, poison.data(), poison.size());  // so that an output never stored is seen
  CommandQueue q = s.queue();
  const uint32_t wgt_base = 0;
  for (int i = 0; i < slots; ++i) {
    q.dep_push(Engine::kCompute, Engine::kLoad);
    q.dep_push(Engine::kStore, Engine::kCompute);
  }
  for (uint32_t m = 0; m < mm.mt; ++m) {
    const uint32_t slot = m % slots, inp_base = slot * mm.kt, acc_base = slot * mm.nt;
    q.dep_pop(Engine::kCompute, Engine::kLoad);
    if (m == 0) q.load(MemId::kWgt, wgt_base, s.element_of(dw, MemId::kWgt), 1, mm.nt * mm.kt,
                       mm.nt * mm.kt);
    q.load(MemId::kInp, inp_base, s.element_of(da, MemId::kInp) + m * mm.kt, 1, mm.kt, mm.kt);
    q.dep_push(Engine::kLoad, Engine::kCompute);

    q.dep_pop(Engine::kLoad, Engine::kCompute);
    q.dep_pop(Engine::kStore, Engine::kCompute);
    UopKernel gemm_kernel, alu_kernel{{acc_base, acc_base, 0}};
    for (uint32_t k = 0; k < mm.kt; ++k) gemm_kernel.push_back({acc_base, inp_base + k, k});
    q.gemm({{acc_base, 0, 0}}, {1, mm.nt}, {0, 1}, {0, 0}, {0, 0}, true);
    q.gemm(gemm_kernel, {1, mm.nt}, {0, 1}, {0, 0}, {0, mm.kt}, false);
    q.alu(alu_kernel, AluOp::kShr, {1, mm.nt}, {0, 1}, {0, 1}, mm.shift);
    q.alu(alu_kernel, AluOp::kMax, {1, mm.nt}, {0, 1}, {0, 1}, -128);
    q.alu(alu_kernel, AluOp::kMin, {1, mm.nt}, {0, 1}, {0, 1}, 127);
    q.dep_push(Engine::kCompute, Engine::kLoad);
    q.dep_push(Engine::kCompute, Engine::kStore);

    q.dep_pop(Engine::kCompute, Engine::kStore);
    q.store(acc_base, s.element_of(dc, MemId::kOut) + m * mm.nt, 1, mm.nt, mm.nt);
    q.dep_push(Engine::kStore, Engine::kCompute);
  }
  const driver::Counters counters = s.run(q);
  out.resize(dc.bytes);
  s.read(dc, out.data(), dc.bytes);
  return counters;
}

class RuntimeOn : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  void SetUp() override { config = test::config_named(std::get<0>(GetParam())); }
  std::unique_ptr<driver::Device> device() { return driver::open_device(std::get<1>(GetParam()), config); }
  Matmul random_matmul(uint32_t mt, uint32_t kt, uint32_t nt) {
    Matmul mm{mt, kt, nt, 6, {}, {}};
    mm.a = test::random_bytes(rng, size_t{mt} * kt * config.inp_tile_bytes());
    mm.w = test::random_bytes(rng, size_t{nt} * kt * config.wgt_tile_bytes());
    mm.shift = test::fitting_shift(mm.sums(config), 8);  // nearly no output clamps
    return mm;
  }
  isa::HwConfig config;
  std::mt19937 rng{7};
};

TEST_P(RuntimeOn, DoubleBufferedMatmulMatchesReference) {
  const Matmul mm = random_matmul(5, 3, 2);
  for (int slots : {1, 2}) {
    auto dev = device();
    Session s(*dev, config, 8 << 20);
    std::vector<int8_t> out;
    const auto counters = run_matmul(s, mm, slots, out);
    EXPECT_EQ(out, mm.reference(config)) << slots << " slot(s)";
    // All kernels fit the scratchpad, so one micro-op load at the start brings them all.
    EXPECT_EQ(counters.at("runtime_uop_loads"), 1u) << slots << " slot(s)";
  }
}

TEST_P(RuntimeOn, KernelsAreReloadedAfterEviction) {
  // More distinct kernels than the UOP scratchpad holds: each ALU kernel is a long list of
  // in-place micro-ops over different tiles.
  const uint32_t depth = config.uop_depth(), tiles = 8;
  auto dev = device();
  Session s(*dev, config, 8 << 20);
  std::vector<int32_t> values = test::random_ints(rng, tiles * config.batch * config.block_out, -1000, 1000);
  const auto src = s.allocate(values.size() * 4, "acc in");
  const auto dst = s.allocate(tiles * config.out_tile_bytes(), "out");
  const auto bytes = test::int32_bytes(values);
  s.write(src, bytes.data(), bytes.size());
  CommandQueue q = s.queue();
  q.load(MemId::kAcc, 0, s.element_of(src, MemId::kAcc), 1, tiles, tiles);
  // Kernel k adds 1 to every tile, repeated so it spans 3/4 of the scratchpad: two kernels
  // never fit together, so alternating them forces a reload each time.
  const uint32_t reps = depth * 3 / 4 / tiles;
  UopKernel k1, k2;
  for (uint32_t r = 0; r < reps; ++r)
    for (uint32_t t = 0; t < tiles; ++t) {
      k1.push_back({t, t, 0});
      k2.push_back({tiles - 1 - t, tiles - 1 - t, 0});
    }
  for (int i = 0; i < 4; ++i) q.alu(i % 2 ? k2 : k1, AluOp::kAdd, {1, 1}, {0, 0}, {0, 0}, 1);
  q.dep_push(Engine::kCompute, Engine::kStore);
  q.dep_pop(Engine::kCompute, Engine::kStore);
  q.store(0, s.element_of(dst, MemId::kOut), 1, tiles, tiles);
  const auto counters = s.run(q);
  EXPECT_EQ(counters.at("runtime_uop_loads"), 4u);
  std::vector<int8_t> out(dst.bytes);
  s.read(dst, out.data(), out.size());
  for (size_t e = 0; e < values.size(); ++e)
    EXPECT_EQ(out[e], static_cast<int8_t>(values[e] + 4 * int32_t(reps))) << e;
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, RuntimeOn,
                         ::testing::Combine(::testing::Values("default", "small", "wide"),
                                            ::testing::ValuesIn(test::test_engines())),
                         [](const auto &info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

TEST(CommandQueue, TokensMergeIntoNeighbouringInstructions) {
  const isa::HwConfig c = test::config_named("small");
  CommandQueue q(c, 0, 1024);
  q.load(MemId::kInp, 0, 0, 1, 1, 1);
  q.dep_push(Engine::kLoad, Engine::kCompute);
  q.dep_pop(Engine::kLoad, Engine::kCompute);
  q.gemm({{0, 0, 0}}, {1, 1}, {0, 0}, {0, 0}, {0, 0}, false);
  q.dep_push(Engine::kCompute, Engine::kStore);
  q.dep_pop(Engine::kCompute, Engine::kStore);
  q.store(0, 0, 1, 1, 1);
  const RecordedStream s = q.finish();
  // uop load, load, gemm, store, finish: no extra instruction carries a token.
  ASSERT_EQ(s.insns.size(), 5u);
  EXPECT_TRUE(isa::deps_of(s.insns[1]).push_next);
  // The pop waits for data, so it goes to the GEMM, not to the micro-op load before it.
  EXPECT_FALSE(isa::deps_of(s.insns[0]).pop_prev);
  EXPECT_TRUE(isa::deps_of(s.insns[2]).pop_prev);
  EXPECT_TRUE(isa::deps_of(s.insns[2]).push_next);
  EXPECT_TRUE(isa::deps_of(s.insns[3]).pop_prev);
  EXPECT_TRUE(isa::deps_of(s.insns[3]).push_prev);  // the store tells FINISH it is done
  EXPECT_TRUE(isa::deps_of(s.insns[4]).pop_next);
  EXPECT_EQ(isa::opcode_of(s.insns[4]), isa::Opcode::kFinish);
}

TEST(CommandQueue, KernelsThatFitLoadOnceAtTheStart) {
  const isa::HwConfig c = test::config_named("small");
  CommandQueue q(c, 100, 1024);
  const UopKernel k1{{0, 0, 0}, {1, 1, 0}}, k2{{2, 0, 0}}, k3{{3, 0, 1}, {4, 0, 1}, {5, 0, 1}};
  q.gemm(k1, {1, 1}, {}, {}, {}, true);
  q.alu(k2, AluOp::kAdd, {1, 1}, {}, {}, 1);
  q.gemm(k1, {1, 1}, {}, {}, {}, false);  // resident: no reload
  q.load(MemId::kInp, 0, 0, 1, 1, 1);
  q.dep_push(Engine::kLoad, Engine::kCompute);
  q.dep_pop(Engine::kLoad, Engine::kCompute);  // a token the next kernel's GEMM waits for
  q.gemm(k3, {1, 1}, {}, {}, {}, false);
  const RecordedStream s = q.finish();
  EXPECT_EQ(s.uop_loads, 1u);
  const auto *first = std::get_if<isa::MemInsn>(&s.insns[0]);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->mem, MemId::kUop);
  EXPECT_EQ(first->sram_base, 0u);
  EXPECT_EQ(first->dram_base, 100u);
  EXPECT_EQ(first->x_size, 6u);
  ASSERT_EQ(s.uop_pool.size(), 6u);
  EXPECT_EQ(s.uop_pool[3], (isa::Uop{3, 0, 1}));
  size_t uop_loads = 0;
  for (const auto &insn : s.insns)
    if (const auto *m = std::get_if<isa::MemInsn>(&insn)) uop_loads += m->mem == MemId::kUop;
  EXPECT_EQ(uop_loads, 1u);
  // The kernels keep their scratchpad places: the third kernel starts at index 3.
  const auto *last = std::get_if<isa::GemmInsn>(&s.insns[5]);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->uop_begin, 3u);
  EXPECT_TRUE(last->deps.pop_prev);
}

TEST(CommandQueue, DiagnosesWhatTheIsaCannotHold) {
  const isa::HwConfig c = test::config_named("small");
  CommandQueue q(c, 0, 1 << 16);
  UopKernel huge(c.uop_depth() + 1, isa::Uop{});
  try {
    q.gemm(huge, {1, 1}, {}, {}, {}, false);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("does not fit the UOP scratchpad (1024 entries"),
              std::string::npos)
        << e.what();
  }
  try {
    q.gemm({{0, 0, 0}}, {1u << 14, 1}, {}, {}, {}, false);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("GEMM command"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'loop_out'"), std::string::npos) << e.what();
  }
  EXPECT_ERROR(q.dep_push(Engine::kLoad, Engine::kStore),
               "no token queue from the load engine to the store engine");
  CommandQueue unbalanced(c, 0, 16);
  unbalanced.dep_pop(Engine::kLoad, Engine::kCompute);
  try {
    unbalanced.finish();
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("pops 1 more token(s) from the load engine"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace vacc::runtime
