// One self-checking program per instruction kind, run on every engine and every bundled
// config, each compared with a plain C++ reference of what the program computes.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <tuple>

#include "program_kit.h"

namespace vacc::test {
namespace {

using isa::AluInsn;
using isa::AluOp;
using isa::GemmInsn;
using isa::MemId;
using isa::Opcode;
using isa::RegionKind;

class IsaProgram : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  void SetUp() override { config = config_named(std::get<0>(GetParam())); }
  driver::RunResult run(const isa::Program &p) { return run_on(std::get<1>(GetParam()), config, p); }
  int acc_n() const { return config.batch * config.block_out; }
  isa::HwConfig config;
  std::mt19937 rng{1234};
};

// LOAD ACC of a 2D strided window, STORE OUT into another stride: the low byte of each value.
TEST_P(IsaProgram, LoadStoreRoundTrip) {
  const uint32_t rows = 3, cols = 5, in_stride = 7, out_stride = 6;
  SerialProgram p(config);
  const auto values = random_ints(rng, rows * in_stride * acc_n(), INT32_MIN, INT32_MAX);
  const uint32_t src = p.builder.add_region("src", RegionKind::kInput, MemId::kAcc, rows * in_stride);
  const uint32_t dst = p.builder.add_region("dst", RegionKind::kOutput, MemId::kOut, rows * out_stride);
  p.builder.set_region_bytes("src", int32_bytes(values));
  p.emit(mem_insn(Opcode::kLoad, MemId::kAcc, 0, src, rows, cols, in_stride));
  p.emit(mem_insn(Opcode::kStore, MemId::kOut, 0, dst, rows, cols, out_stride));
  const auto program = p.finish();
  const auto out = region_after(program, run(program), "dst");

  std::vector<uint8_t> expected(out.size(), 0);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c)
      for (int e = 0; e < acc_n(); ++e)
        expected[(r * out_stride + c) * acc_n() + e] =
            static_cast<uint8_t>(values[(r * in_stride + c) * acc_n() + e]);
  EXPECT_EQ(out, expected);
}

// LOAD ACC with zero padding on each side and on all four: padded positions read as zero.
TEST_P(IsaProgram, PaddedLoads) {
  const std::vector<std::array<uint32_t, 4>> pads = {
      {1, 0, 0, 0}, {0, 2, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 3}, {2, 1, 1, 2}};
  const uint32_t rows = 2, cols = 3;
  for (const auto &pad : pads) {
    SCOPED_TRACE(::testing::Message() << "pad " << pad[0] << "," << pad[1] << "," << pad[2] << ","
                                      << pad[3]);
    const uint32_t height = pad[0] + rows + pad[1], width = pad[2] + cols + pad[3];
    SerialProgram p(config);
    const auto values = random_ints(rng, rows * cols * acc_n(), -100, 100);
    const uint32_t src = p.builder.add_region("src", RegionKind::kInput, MemId::kAcc, rows * cols);
    const uint32_t dst =
        p.builder.add_region("dst", RegionKind::kOutput, MemId::kOut, height * width);
    p.builder.set_region_bytes("src", int32_bytes(values));
    auto load = mem_insn(Opcode::kLoad, MemId::kAcc, 0, src, rows, cols, cols);
    load.pad_top = pad[0];
    load.pad_bottom = pad[1];
    load.pad_left = pad[2];
    load.pad_right = pad[3];
    p.emit(load);
    p.emit(mem_insn(Opcode::kStore, MemId::kOut, 0, dst, 1, height * width, height * width));
    const auto program = p.finish();
    const auto out = region_after(program, run(program), "dst");

    std::vector<uint8_t> expected(out.size(), 0);
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t c = 0; c < cols; ++c)
        for (int e = 0; e < acc_n(); ++e)
          expected[((r + pad[0]) * width + c + pad[2]) * acc_n() + e] =
              static_cast<uint8_t>(values[(r * cols + c) * acc_n() + e]);
    EXPECT_EQ(out, expected);
  }
}

// A padded INP load seen through a GEMM with an identity weight tile.
TEST_P(IsaProgram, PaddedInputThroughIdentityGemm) {
  if (config.block_in != config.block_out) GTEST_SKIP() << "identity tile needs block_in == block_out";
  const uint32_t rows = 3, cols = 2, pt = 1, pb = 2, pl = 2, pr = 1;
  const uint32_t height = pt + rows + pb, width = pl + cols + pr, tiles = height * width;
  const int inp_n = config.batch * config.block_in;
  SerialProgram p(config);
  const auto inp = random_bytes(rng, rows * cols * inp_n);
  std::vector<uint8_t> identity(config.wgt_tile_bytes(), 0);
  for (int o = 0; o < config.block_out; ++o) identity[o * config.block_in + o] = 1;
  const uint32_t a = p.builder.add_region("a", RegionKind::kInput, MemId::kInp, rows * cols);
  const uint32_t w = p.builder.add_region("w", RegionKind::kWeight, MemId::kWgt, 1);
  const uint32_t out = p.builder.add_region("out", RegionKind::kOutput, MemId::kOut, tiles);
  p.builder.set_region_bytes("a", inp);
  p.builder.set_region_bytes("w", identity);
  const uint32_t uops = p.builder.uop_region_base();
  p.builder.add_uop({0, 0, 0});

  auto load = mem_insn(Opcode::kLoad, MemId::kInp, 0, a, rows, cols, cols);
  load.pad_top = pt, load.pad_bottom = pb, load.pad_left = pl, load.pad_right = pr;
  p.emit(load);
  p.emit(mem_insn(Opcode::kLoad, MemId::kWgt, 0, w, 1, 1, 1));
  p.emit(mem_insn(Opcode::kLoad, MemId::kUop, 0, uops, 1, 1, 1));
  GemmInsn g;
  g.uop_begin = 0, g.uop_end = 1, g.loop_out = 1, g.loop_in = tiles;
  g.acc = {0, 1}, g.inp = {0, 1}, g.wgt = {0, 0};
  g.reset = true;
  p.emit(g);
  g.reset = false;
  p.emit(g);
  p.emit(mem_insn(Opcode::kStore, MemId::kOut, 0, out, 1, tiles, tiles));
  const auto program = p.finish();
  const auto got = region_after(program, run(program), "out");

  std::vector<uint8_t> expected(got.size(), 0);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c)
      for (int e = 0; e < inp_n; ++e)
        expected[((r + pt) * width + c + pl) * inp_n + e] = inp[(r * cols + c) * inp_n + e];
  EXPECT_EQ(got, expected);
}

// C = A·Bᵀ over a tiled matrix: `mt` x `kt` tiles of A and `nt` x `kt` of B in INP and WGT,
// a micro-op per reduction step k (dst 0, src k, wgt k) and one more for the shifts of
// store_acc_words, and the GEMM whose loops cover every (m, n) tile with all of them.
struct TiledMatmul {
  static constexpr uint32_t mt = 3, kt = 2, nt = 2;  // tiles along M, K, N
  std::vector<uint8_t> a, w;
  std::vector<uint32_t> outs;
  GemmInsn g;

  TiledMatmul(SerialProgram &p, const isa::HwConfig &c, std::mt19937 &rng)
      : a(random_bytes(rng, mt * kt * c.batch * c.block_in)),
        w(random_bytes(rng, nt * kt * c.block_out * c.block_in)) {
    const uint32_t ra = p.builder.add_region("a", RegionKind::kInput, MemId::kInp, mt * kt);
    const uint32_t rw = p.builder.add_region("w", RegionKind::kWeight, MemId::kWgt, nt * kt);
    for (int k = 0; k < 4; ++k)
      outs.push_back(
          p.builder.add_region("c" + std::to_string(k), RegionKind::kOutput, MemId::kOut, mt * nt));
    p.builder.set_region_bytes("a", a);
    p.builder.set_region_bytes("w", w);
    const uint32_t uops = p.builder.uop_region_base();
    for (uint32_t k = 0; k < kt; ++k) p.builder.add_uop({0, k, k});
    p.builder.add_uop({0, 0, 0});
    p.emit(mem_insn(Opcode::kLoad, MemId::kInp, 0, ra, 1, mt * kt, mt * kt));
    p.emit(mem_insn(Opcode::kLoad, MemId::kWgt, 0, rw, 1, nt * kt, nt * kt));
    p.emit(mem_insn(Opcode::kLoad, MemId::kUop, 0, uops, 1, kt + 1, kt + 1));
    g.loop_out = mt, g.loop_in = nt;
    g.acc = {nt, 1}, g.inp = {kt, 0}, g.wgt = {0, kt};
    g.uop_begin = 0, g.uop_end = kt;
  }

  // Stores the accumulators, runs the program and expects `times` x A·Bᵀ in them and
  // `passes` x mt·nt·kt micro-ops' MACs counted.
  void expect_product(SerialProgram &p, const isa::HwConfig &c,
                      const std::function<driver::RunResult(const isa::Program &)> &run, int times,
                      uint64_t passes) const {
    store_acc_words(p, 0, mt * nt, kt, outs);
    const auto program = p.finish();
    const driver::RunResult result = run(program);
    std::vector<std::vector<uint8_t>> bytes;
    for (int k = 0; k < 4; ++k)
      bytes.push_back(region_after(program, result, "c" + std::to_string(k)));
    EXPECT_EQ(acc_words(bytes), expected(c, times));
    EXPECT_EQ(result.counters.at("macs"), passes * mt * nt * kt * c.peak_macs_per_cycle());
  }

  // `times` x A·Bᵀ, wrapped to 32 bits, in the accumulators' layout.
  std::vector<int32_t> expected(const isa::HwConfig &c, int times) const {
    std::vector<int32_t> out;
    for (int64_t sum : tiled_product(c, a, w, mt, nt, kt))
      out.push_back(static_cast<int32_t>(times * sum));
    return out;
  }
};

// C = A·Bᵀ twice accumulated over a tiled matrix: reset, both loop levels, several factors.
TEST_P(IsaProgram, GemmResetAccumulateTwoLoopLevels) {
  SerialProgram p(config);
  TiledMatmul mm(p, config, rng);
  GemmInsn reset = mm.g;
  reset.uop_end = 1, reset.reset = true;
  p.emit(reset);
  p.emit(mm.g);
  p.emit(mm.g);
  mm.expect_product(
      p, config, [&](const isa::Program &x) { return run(x); }, 2, 2);
}

// GEMM assign (extensions.gemm_assign): over accumulators holding an earlier sum, an assign
// GEMM of the first reduction step writes that step's products alone; the other steps and a
// second pass add to them: C = A·Bᵀ twice, whatever the tiles held before.
TEST_P(IsaProgram, GemmAssignReplacesAccumulators) {
  if (!config.gemm_assign) GTEST_SKIP() << "config '" << config.name << "' has gemm_assign off";
  SerialProgram p(config);
  TiledMatmul mm(p, config, rng);
  p.emit(mm.g);  // stale sums in the accumulators, added to whatever they held
  p.emit(mm.g);
  GemmInsn first = mm.g;
  first.uop_end = 1, first.assign = true;
  p.emit(first);
  GemmInsn rest = mm.g;
  rest.uop_begin = 1;
  p.emit(rest);
  p.emit(mm.g);
  // Every micro-op of the GEMMs multiplies (2 + 1 + 1 passes over the kt steps): assign is no
  // reset.
  mm.expect_product(
      p, config, [&](const isa::Program &x) { return run(x); }, 2, 4);
}

// STORE INP (extensions.store_inp): C = A·Bᵀ narrowed on chip into INP rows three tiles apart,
// then D = C8·B2ᵀ read from there by a second GEMM: the layer-to-layer path with no DRAM between.
TEST_P(IsaProgram, StoreInpFeedsTheNextGemm) {
  if (!config.store_inp) GTEST_SKIP() << "config '" << config.name << "' has store_inp off";
  constexpr uint32_t mt = TiledMatmul::mt, kt = TiledMatmul::kt, nt = TiledMatmul::nt;
  constexpr uint32_t n2t = 2, row = 3, c_base = 16, d_acc = 8, w2_base = nt * kt;
  SerialProgram p(config);
  // The second product's weights and D's four byte planes, declared before TiledMatmul places
  // the micro-op region.
  const auto w2 = random_bytes(rng, n2t * nt * config.block_out * config.block_in);
  const uint32_t rw2 = p.builder.add_region("w2", RegionKind::kWeight, MemId::kWgt, n2t * nt);
  p.builder.set_region_bytes("w2", w2);
  std::vector<uint32_t> outs;
  for (int k = 0; k < 4; ++k)
    outs.push_back(
        p.builder.add_region("d" + std::to_string(k), RegionKind::kOutput, MemId::kOut, mt * n2t));
  TiledMatmul mm(p, config, rng);
  GemmInsn reset = mm.g;
  reset.uop_end = 1, reset.reset = true;
  p.emit(reset);
  p.emit(mm.g);  // C in ACC [0, mt*nt), [m][n]
  // INP[c_base + m*row + n] = narrow(C[m][n]): rows of nt tiles, row apart.
  p.emit(mem_insn(Opcode::kStore, MemId::kInp, 0, c_base, mt, nt, row));
  p.emit(mem_insn(Opcode::kLoad, MemId::kWgt, w2_base, rw2, 1, n2t * nt, n2t * nt));
  // D[m][j] += C8[m][k]·B2[j][k]ᵀ: a micro-op per k, loops over m (INP rows) and j; and one
  // micro-op on D for store_acc_words' shifts.
  uint32_t first = 0;
  for (uint32_t k = 0; k < nt; ++k) {
    const uint32_t u = p.builder.add_uop({d_acc, c_base + k, w2_base + k});
    if (k == 0) first = u;
  }
  p.builder.add_uop({d_acc, d_acc, 0});
  const uint32_t uop_sram = kt + 1;  // after TiledMatmul's micro-ops
  p.emit(mem_insn(Opcode::kLoad, MemId::kUop, uop_sram, p.builder.uop_region_base() + first, 1,
                  nt + 1, nt + 1));
  GemmInsn g;
  g.uop_begin = uop_sram, g.uop_end = uop_sram + nt;
  g.loop_out = mt, g.loop_in = n2t;
  g.acc = {n2t, 1}, g.inp = {row, 0}, g.wgt = {0, nt};
  GemmInsn g_reset = g;
  g_reset.uop_end = g.uop_begin + 1, g_reset.reset = true;
  p.emit(g_reset);
  p.emit(g);
  store_acc_words(p, d_acc, mt * n2t, uop_sram + nt, outs);
  const auto program = p.finish();
  const driver::RunResult result = run(program);
  std::vector<std::vector<uint8_t>> bytes;
  for (int k = 0; k < 4; ++k)
    bytes.push_back(region_after(program, result, "d" + std::to_string(k)));

  // The reference: C's low bytes are the INP tiles of the second product's A ([m][k] = [m][n]).
  std::vector<uint8_t> c8;
  for (int64_t v : tiled_product(config, mm.a, mm.w, mt, nt, kt)) c8.push_back(uint8_t(v));
  std::vector<int32_t> expected;
  for (int64_t v : tiled_product(config, c8, w2, mt, n2t, nt)) expected.push_back(int32_t(v));
  EXPECT_EQ(acc_words(bytes), expected);
  // fsim and perf count the bytes stored on chip (rtl's counters are the hardware's).
  if (std::get<1>(GetParam()) != "rtl")
    EXPECT_EQ(result.counters.at("store_bytes_inp"),
              uint64_t{mt} * nt * static_cast<uint64_t>(config.inp_tile_bytes()));
}

// a clipped to the bounds in the low two bytes of `bounds`, signed.
int32_t reference_clip(int32_t a, int32_t bounds) {
  const int32_t lo = int8_t(uint32_t(bounds) & 0xff), hi = int8_t((uint32_t(bounds) >> 8) & 0xff);
  return a < lo ? std::min(lo, hi) : std::min(a, hi);
}

int32_t reference_alu(AluOp op, int32_t a, int32_t b, int32_t imm) {
  switch (op) {
    case AluOp::kMin: return std::min(a, b);
    case AluOp::kMax: return std::max(a, b);
    case AluOp::kAdd: return static_cast<int32_t>(uint32_t(a) + uint32_t(b));
    case AluOp::kShr:
      return b >= 0 ? a >> std::min(b, 31) : static_cast<int32_t>(uint32_t(a) << std::min(-b, 31));
    case AluOp::kMul: return static_cast<int32_t>(uint32_t(a) * uint32_t(b));
    case AluOp::kClip:
      return reference_clip(a, b);
    case AluOp::kShrClip:
      return reference_clip(reference_alu(AluOp::kShr, a, b, 0), imm);
  }
  return 0;
}

// Every ALU operation, with a vector operand and with immediates, on full 32-bit values.
TEST_P(IsaProgram, AluOperations) {
  const uint32_t n = 6;  // tiles of each operand
  for (int op_index = 0; op_index < isa::kNumAluOps; ++op_index) {
    const AluOp op = static_cast<AluOp>(op_index);
    if (!isa::alu_op_unavailable(config, op).empty()) continue;  // an extension it lacks
    for (int variant = 0; variant < 4; ++variant) {
      const bool use_imm = variant > 0;
      // SHR_CLIP's vector form takes its bounds from the immediate.
      const int32_t imm = op == AluOp::kShr ? std::array<int32_t, 4>{0, 5, -3, 40}[variant]
                          : op == AluOp::kShrClip
                              ? std::array<int32_t, 4>{isa::clip_imm(-100, 90), 5, -3, 40}[variant]
                              : std::array<int32_t, 4>{0, 1234, -32768, 32767}[variant];
      SCOPED_TRACE(::testing::Message() << "alu." << isa::alu_op_name(op)
                                        << (use_imm ? " imm=" + std::to_string(imm) : " vector"));
      SerialProgram p(config);
      auto dst = random_ints(rng, n * acc_n(), INT32_MIN, INT32_MAX);
      const bool shift = op == AluOp::kShr || op == AluOp::kShrClip;
      auto src = shift ? random_ints(rng, n * acc_n(), -40, 40)
                       : random_ints(rng, n * acc_n(), INT32_MIN, INT32_MAX);
      std::vector<int32_t> both = dst;
      both.insert(both.end(), src.begin(), src.end());
      const uint32_t r = p.builder.add_region("in", RegionKind::kInput, MemId::kAcc, 2 * n);
      p.builder.set_region_bytes("in", int32_bytes(both));
      std::vector<uint32_t> outs;
      for (int k = 0; k < 4; ++k)
        outs.push_back(
            p.builder.add_region("o" + std::to_string(k), RegionKind::kOutput, MemId::kOut, n));
      const uint32_t uops = p.builder.uop_region_base();
      p.builder.add_uop({0, n, 0});
      p.builder.add_uop({0, 0, 0});
      p.emit(mem_insn(Opcode::kLoad, MemId::kAcc, 0, r, 1, 2 * n, 2 * n));
      p.emit(mem_insn(Opcode::kLoad, MemId::kUop, 0, uops, 1, 2, 2));
      AluInsn alu;
      alu.op = op;
      alu.uop_begin = 0, alu.uop_end = 1;
      alu.loop_out = 2, alu.loop_in = n / 2;  // both loop levels
      alu.dst = {n / 2, 1}, alu.src = {n / 2, 1};
      alu.use_imm = use_imm, alu.imm = imm;
      p.emit(alu);
      store_acc_words(p, 0, n, 1, outs);
      const auto program = p.finish();
      const auto result = run(program);
      std::vector<std::vector<uint8_t>> bytes;
      for (int k = 0; k < 4; ++k)
        bytes.push_back(region_after(program, result, "o" + std::to_string(k)));

      std::vector<int32_t> expected(dst.size());
      for (size_t e = 0; e < dst.size(); ++e)
        expected[e] = reference_alu(op, dst[e], use_imm ? imm : src[e], imm);
      EXPECT_EQ(acc_words(bytes), expected);
    }
  }
}

// ReLU as the compiler emits it: max 0, then min 127, then a narrowing store.
TEST_P(IsaProgram, Relu) {
  const uint32_t n = 5;
  SerialProgram p(config);
  const auto values = random_ints(rng, n * acc_n(), -300, 300);
  const uint32_t r = p.builder.add_region("in", RegionKind::kInput, MemId::kAcc, n);
  const uint32_t o = p.builder.add_region("out", RegionKind::kOutput, MemId::kOut, n);
  p.builder.set_region_bytes("in", int32_bytes(values));
  const uint32_t uops = p.builder.uop_region_base();
  p.builder.add_uop({0, 0, 0});
  p.emit(mem_insn(Opcode::kLoad, MemId::kAcc, 0, r, 1, n, n));
  p.emit(mem_insn(Opcode::kLoad, MemId::kUop, 0, uops, 1, 1, 1));
  for (auto [op, imm] : {std::pair{AluOp::kMax, 0}, std::pair{AluOp::kMin, 127}}) {
    AluInsn alu;
    alu.op = op, alu.uop_begin = 0, alu.uop_end = 1, alu.loop_in = n, alu.dst = {0, 1};
    alu.use_imm = true, alu.imm = imm;
    p.emit(alu);
  }
  p.emit(mem_insn(Opcode::kStore, MemId::kOut, 0, o, 1, n, n));
  const auto program = p.finish();
  const auto out = region_after(program, run(program), "out");
  for (size_t e = 0; e < values.size(); ++e)
    EXPECT_EQ(int8_t(out[e]), std::clamp(values[e], 0, 127)) << "element " << e;
}

// GEMM + bias + shift-and-clip requantization to int8, as a quantized layer runs.
TEST_P(IsaProgram, ShiftAndClipRequantization) {
  const uint32_t mt = 4, kt = 3;  // one output column tile
  const int B = config.batch, BI = config.block_in, BO = config.block_out;
  const int32_t shift = 7;
  SerialProgram p(config);
  const auto a = random_bytes(rng, mt * kt * B * BI);
  const auto w = random_bytes(rng, kt * BO * BI);
  const auto bias = random_ints(rng, mt * acc_n(), -5000, 5000);
  const uint32_t ra = p.builder.add_region("a", RegionKind::kInput, MemId::kInp, mt * kt);
  const uint32_t rw = p.builder.add_region("w", RegionKind::kWeight, MemId::kWgt, kt);
  const uint32_t rb = p.builder.add_region("bias", RegionKind::kWeight, MemId::kAcc, mt);
  const uint32_t ro = p.builder.add_region("out", RegionKind::kOutput, MemId::kOut, mt);
  p.builder.set_region_bytes("a", a);
  p.builder.set_region_bytes("w", w);
  p.builder.set_region_bytes("bias", int32_bytes(bias));
  const uint32_t uops = p.builder.uop_region_base();
  for (uint32_t k = 0; k < kt; ++k) p.builder.add_uop({0, k, k});
  p.builder.add_uop({0, mt, 0});  // acc[m] += acc[mt + m] (bias)
  p.builder.add_uop({0, 0, 0});
  p.emit(mem_insn(Opcode::kLoad, MemId::kInp, 0, ra, 1, mt * kt, mt * kt));
  p.emit(mem_insn(Opcode::kLoad, MemId::kWgt, 0, rw, 1, kt, kt));
  p.emit(mem_insn(Opcode::kLoad, MemId::kAcc, mt, rb, 1, mt, mt));
  p.emit(mem_insn(Opcode::kLoad, MemId::kUop, 0, uops, 1, kt + 2, kt + 2));
  GemmInsn g;
  g.loop_out = mt, g.acc = {1, 0}, g.inp = {kt, 0};
  g.uop_begin = 0, g.uop_end = 1, g.reset = true;
  p.emit(g);
  g.uop_end = kt, g.reset = false;
  p.emit(g);
  AluInsn add;
  add.op = AluOp::kAdd, add.uop_begin = kt, add.uop_end = kt + 1, add.loop_in = mt;
  add.dst = {0, 1}, add.src = {0, 1};
  p.emit(add);
  for (auto [op, imm] : {std::pair{AluOp::kShr, shift}, std::pair{AluOp::kMax, -128},
                         std::pair{AluOp::kMin, 127}}) {
    AluInsn alu;
    alu.op = op, alu.uop_begin = kt + 1, alu.uop_end = kt + 2, alu.loop_in = mt, alu.dst = {0, 1};
    alu.use_imm = true, alu.imm = imm;
    p.emit(alu);
  }
  p.emit(mem_insn(Opcode::kStore, MemId::kOut, 0, ro, 1, mt, mt));
  const auto program = p.finish();
  const auto out = region_after(program, run(program), "out");

  for (uint32_t m = 0; m < mt; ++m)
    for (int b = 0; b < B; ++b)
      for (int o = 0; o < BO; ++o) {
        int32_t sum = bias[(m * B + b) * BO + o];
        for (uint32_t k = 0; k < kt; ++k)
          for (int c = 0; c < BI; ++c)
            sum += int8_t(a[((m * kt + k) * B + b) * BI + c]) * int8_t(w[(k * BO + o) * BI + c]);
        const int32_t want = std::clamp(sum >> shift, -128, 127);
        EXPECT_EQ(int8_t(out[(m * B + b) * BO + o]), want) << "m " << m << " b " << b << " o " << o;
      }
}

std::string param_name(const ::testing::TestParamInfo<IsaProgram::ParamType> &info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, IsaProgram,
                         ::testing::Combine(::testing::Values("default", "small", "wide", "batch4"),
                                            ::testing::ValuesIn(test_engines())),
                         param_name);

}  // namespace
}  // namespace vacc::test
