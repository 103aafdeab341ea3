#include "vacc/progen/workloads.h"

#include <random>
#include <vector>

#include "vacc/isa/insn.h"
#include "vacc/support/error.h"

namespace vacc::progen {
namespace {

using isa::MemId;

void fill_random(isa::ProgramBuilder &b, const std::string &name, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> bytes = b.region_bytes(name);
  for (auto &byte : bytes) byte = static_cast<uint8_t>(rng());
  b.set_region_bytes(name, bytes);
}

isa::MemInsn dma(isa::Opcode op, MemId mem, uint32_t sram, uint32_t dram, uint32_t x) {
  isa::MemInsn m;
  m.opcode = op;
  m.mem = mem;
  m.sram_base = sram;
  m.dram_base = dram;
  m.y_size = 1;
  m.x_size = x;
  m.x_stride = x;
  return m;
}

}  // namespace

isa::Program make_pipeline_program(const isa::HwConfig &config, int iterations, int tiles,
                                   bool double_buffered, int gemm_repeats) {
  VACC_CHECK(iterations >= 1 && tiles >= 1);
  const uint32_t n = static_cast<uint32_t>(tiles);
  const int slots = double_buffered ? 2 : 1;
  VACC_CHECK(2 * n <= static_cast<uint32_t>(config.inp_depth()) &&
             2 * n <= static_cast<uint32_t>(config.wgt_depth()) &&
             2 * n <= static_cast<uint32_t>(config.acc_depth()))
      << "tiles " << tiles << " do not fit two slots";
  isa::ProgramBuilder b(config);
  const uint64_t total = uint64_t{n} * static_cast<uint64_t>(iterations);
  const uint32_t inp = b.add_region("inp", isa::RegionKind::kInput, MemId::kInp, total);
  const uint32_t wgt = b.add_region("wgt", isa::RegionKind::kWeight, MemId::kWgt, total);
  const uint32_t out = b.add_region("out", isa::RegionKind::kOutput, MemId::kOut, total);
  fill_random(b, "inp", 11);
  fill_random(b, "wgt", 12);
  const uint32_t uops = b.uop_region_base();
  // Micro-ops per slot s: 2s resets the slot's ACC tiles, 2s+1 multiplies its INP x WGT.
  for (uint32_t s = 0; s < 2; ++s) {
    b.add_uop({s * n, 0, 0});
    b.add_uop({s * n, s * n, s * n});
  }
  isa::MemInsn load_uops = dma(isa::Opcode::kLoad, MemId::kUop, 0, uops, 4);
  b.emit(load_uops);
  for (int k = 0; k < iterations; ++k) {
    const uint32_t slot = static_cast<uint32_t>(k % slots);
    const uint32_t at = static_cast<uint32_t>(k) * n;
    isa::MemInsn li = dma(isa::Opcode::kLoad, MemId::kInp, slot * n, inp + at, n);
    isa::MemInsn lw = dma(isa::Opcode::kLoad, MemId::kWgt, slot * n, wgt + at, n);
    li.deps.pop_next = k >= slots;
    lw.deps.push_next = true;
    b.emit(li);
    b.emit(lw);

    isa::GemmInsn reset;
    reset.reset = true;
    reset.uop_begin = 2 * slot;
    reset.uop_end = 2 * slot + 1;
    reset.loop_in = n;
    reset.acc = {0, 1};
    reset.deps.pop_prev = true;
    reset.deps.pop_next = k >= slots;
    isa::GemmInsn gemm;  // acc[i] += inp[i] . wgt[j] for all i, j < n
    gemm.uop_begin = 2 * slot + 1;
    gemm.uop_end = 2 * slot + 2;
    gemm.loop_out = n;
    gemm.loop_in = n;
    gemm.acc = {1, 0};
    gemm.inp = {1, 0};
    gemm.wgt = {0, 1};
    b.emit(reset);
    for (int r = 0; r < gemm_repeats; ++r) {
      const bool last = r == gemm_repeats - 1;
      gemm.deps.push_prev = last && k + slots < iterations;
      gemm.deps.push_next = last;
      b.emit(gemm);
    }

    isa::MemInsn st = dma(isa::Opcode::kStore, MemId::kOut, slot * n, out + at, n);
    st.deps.pop_prev = true;
    st.deps.push_prev = k + slots < iterations || k == iterations - 1;
    b.emit(st);
  }
  isa::FinishInsn finish;
  finish.deps.pop_next = true;
  b.emit(finish);
  return b.finish();
}

isa::Program make_gemm_stream(const isa::HwConfig &config, int gemms, int uops_per_gemm) {
  VACC_CHECK(gemms >= 1 && uops_per_gemm >= 16 && uops_per_gemm % 16 == 0 &&
             uops_per_gemm <= 256);
  const uint32_t n = 16;
  const uint32_t lo = static_cast<uint32_t>(uops_per_gemm) / n;
  isa::ProgramBuilder b(config);
  const uint32_t inp = b.add_region("inp", isa::RegionKind::kInput, MemId::kInp, n);
  const uint32_t wgt = b.add_region("wgt", isa::RegionKind::kWeight, MemId::kWgt, n);
  const uint32_t out = b.add_region("out", isa::RegionKind::kOutput, MemId::kOut, n);
  fill_random(b, "inp", 21);
  fill_random(b, "wgt", 22);
  const uint32_t uops = b.uop_region_base();
  b.add_uop({0, 0, 0});
  isa::MemInsn li = dma(isa::Opcode::kLoad, MemId::kInp, 0, inp, n);
  isa::MemInsn lw = dma(isa::Opcode::kLoad, MemId::kWgt, 0, wgt, n);
  lw.deps.push_next = true;
  b.emit(li);
  b.emit(lw);
  isa::MemInsn lu = dma(isa::Opcode::kLoad, MemId::kUop, 0, uops, 1);
  lu.deps.pop_prev = true;
  b.emit(lu);
  isa::GemmInsn reset;
  reset.reset = true;
  reset.uop_begin = 0;
  reset.uop_end = 1;
  reset.loop_in = n;
  reset.acc = {0, 1};
  b.emit(reset);
  for (int g = 0; g < gemms; ++g) {
    isa::GemmInsn gemm;  // acc[i] += inp[i] . wgt[j]
    gemm.uop_begin = 0;
    gemm.uop_end = 1;
    gemm.loop_out = lo;
    gemm.loop_in = n;
    gemm.acc = {1, 0};
    gemm.inp = {1, 0};
    gemm.wgt = {0, 1};
    gemm.deps.push_next = g == gemms - 1;
    b.emit(gemm);
  }
  isa::MemInsn st = dma(isa::Opcode::kStore, MemId::kOut, 0, out, n);
  st.deps.pop_prev = true;
  st.deps.push_prev = true;
  b.emit(st);
  isa::FinishInsn finish;
  finish.deps.pop_next = true;
  b.emit(finish);
  return b.finish();
}

}  // namespace vacc::progen
