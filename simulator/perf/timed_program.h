// The program as the timing model sees it: every instruction decoded once into the fields that
// decide the RTL's timing (engine, dependency flags, DMA geometry, micro-op loop extents, the
// overlap flag and the ACC bank it promises), and each engine's instructions in program order
// (the contents of its instruction queue). Data never enters the timing model.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/insn.h"

namespace vacc::sim::perf {

// "Never" for the model's fast-forward horizons.
inline constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();

enum class Kind : uint8_t { kLoad, kStore, kGemm, kAlu, kFinish };

struct TimedInsn {
  Kind kind = Kind::kFinish;
  isa::Engine engine = isa::Engine::kCompute;
  isa::DepFlags deps;
  // LOAD / STORE.
  isa::MemId mem = isa::MemId::kInp;
  uint32_t dram_base = 0;
  uint32_t y_size = 0, x_size = 0, x_stride = 0;
  uint32_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  uint32_t sram_base = 0;
  // GEMM / ALU: iterations of the micro-op loop nest (0 for an empty nest).
  uint64_t iterations = 0;
  uint32_t uop_begin = 0, uop_end = 0;
  bool overlap = false;
  bool reset = false;    // GEMM: zeroes instead of accumulating (counts no MACs)
  bool use_imm = false;  // ALU: an immediate operand (issues every cycle)
  // ALU with extensions.alu_hold: a vector operand shared by every micro-op (one micro-op, both
  // src factors 0), read once: the micro-ops after the first issue every cycle.
  bool hold = false;
  // LOAD UOP: where the ACC banks of the micro-ops it loads start in TimedProgram::uop_banks.
  uint32_t uop_banks_at = 0;
};

struct TimedProgram {
  std::vector<isa::Insn> decoded;
  std::vector<TimedInsn> insns;
  // For each LOAD UOP in program order, the ACC bank of each micro-op's dst, read from the
  // image at the start of the run: the only thing about micro-ops the timing depends on (a
  // flagged GEMM/ALU is dispatched by the bank of its first micro-op).
  std::vector<uint8_t> uop_banks;
  // Per engine (isa::Engine), the indices of its instructions in program order.
  std::vector<uint32_t> order[isa::kNumEngines];
  // Indices of the GEMMs and of the ALUs, in program order (the compute units' tracks).
  std::vector<uint32_t> gemms, alus;
};

// Decodes `insn_count` instructions at byte `insn_offset` of `dram`. Throws vacc::Error when
// the stream lies outside `dram` or an instruction does not decode (fsim names both better).
TimedProgram decode_timed_program(const isa::HwConfig &config, const std::vector<uint8_t> &dram,
                                  uint64_t insn_offset, uint32_t insn_count);

}  // namespace vacc::sim::perf
