// Scratchpad footprints of the commands in an CodegenCommands: which engine runs each and which
// scratchpad ranges it reads and writes (GEMM/ALU ranges from their micro-ops and loops).
// Shared by the passes that reorder commands (relax_tokens, stagger_threads).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "codegen_commands.h"
#include "vacc/isa/insn.h"

namespace vacc::lower {

using isa::Engine;

struct Range {
  int mem = 0;  // isa::MemId
  bool write = false;
  uint64_t lo = 0, hi = 0;  // [lo, hi)
};

struct Footprint {
  Engine engine = Engine::kCompute;
  bool is_insn = false;
  std::vector<Range> ranges;
};

// A LOAD of GEMM operands (INP or WGT): the load engine's work.
inline bool is_operand_load(const CodegenCommand &op) {
  const auto *d = std::get_if<isa::DmaCommand>(&op.cmd);
  return d && !d->store && (d->mem == isa::MemId::kInp || d->mem == isa::MemId::kWgt);
}

inline bool is_store(const CodegenCommand &op) {
  const auto *d = std::get_if<isa::DmaCommand>(&op.cmd);
  return d && d->store;
}

inline uint64_t reach(const isa::UopKernel &k, uint32_t isa::Uop::*field, const isa::LoopFactors &f,
                      uint32_t lo, uint32_t li, uint64_t *first) {
  uint64_t mn = UINT64_MAX, mx = 0;
  for (const isa::Uop &u : k) {
    mn = std::min<uint64_t>(mn, u.*field);
    mx = std::max<uint64_t>(
        mx, uint64_t{u.*field} + uint64_t{lo - 1} * f.out + uint64_t{li - 1} * f.in);
  }
  *first = mn;
  return mx + 1;
}

inline Footprint footprint(const CodegenCommand &op) {
  Footprint fp;
  if (const auto *d = std::get_if<isa::DmaCommand>(&op.cmd)) {
    fp.is_insn = true;
    if (d->store) {
      fp.engine = Engine::kStore;
      fp.ranges.push_back(
          {static_cast<int>(isa::MemId::kAcc), false, d->sram, d->sram + uint64_t{d->y} * d->x});
      if (d->to_inp() && d->y > 0 && d->x > 0)
        fp.ranges.push_back({static_cast<int>(isa::MemId::kInp), true, d->offset,
                             d->offset + uint64_t{d->y - 1} * d->stride + d->x});
    } else {
      fp.engine = is_operand_load(op) ? Engine::kLoad : Engine::kCompute;
      const uint64_t n =
          uint64_t{d->pad_top + d->y + d->pad_bottom} * (d->pad_left + d->x + d->pad_right);
      fp.ranges.push_back({static_cast<int>(d->mem), true, d->sram, d->sram + n});
    }
  } else if (const auto *g = std::get_if<isa::GemmCommand>(&op.cmd)) {
    fp.is_insn = true;
    uint64_t lo = 0, hi = reach(op.uops, &isa::Uop::dst, g->acc, g->loop_out, g->loop_in, &lo);
    fp.ranges.push_back({static_cast<int>(isa::MemId::kAcc), true, lo, hi});
    if (!g->reset) {
      hi = reach(op.uops, &isa::Uop::src, g->inp, g->loop_out, g->loop_in, &lo);
      fp.ranges.push_back({static_cast<int>(isa::MemId::kInp), false, lo, hi});
      hi = reach(op.uops, &isa::Uop::wgt, g->wgt, g->loop_out, g->loop_in, &lo);
      fp.ranges.push_back({static_cast<int>(isa::MemId::kWgt), false, lo, hi});
    }
  } else if (const auto *a = std::get_if<isa::AluCommand>(&op.cmd)) {
    fp.is_insn = true;
    uint64_t lo = 0, hi = reach(op.uops, &isa::Uop::dst, a->dst, a->loop_out, a->loop_in, &lo);
    fp.ranges.push_back({static_cast<int>(isa::MemId::kAcc), true, lo, hi});
    if (!a->use_imm) {
      hi = reach(op.uops, &isa::Uop::src, a->src, a->loop_out, a->loop_in, &lo);
      fp.ranges.push_back({static_cast<int>(isa::MemId::kAcc), false, lo, hi});
    }
  }
  return fp;
}

inline bool overlaps(const Range &x, const Range &y) {
  return x.mem == y.mem && x.lo < y.hi && y.lo < x.hi;
}

inline bool conflict(const Footprint &a, const Footprint &b) {
  for (const Range &x : a.ranges)
    for (const Range &y : b.ranges)
      if ((x.write || y.write) && overlaps(x, y)) return true;
  return false;
}

}  // namespace vacc::lower
