// Typed instructions of the vacc ISA (DESIGN.md "The ISA"; bit layout in isa/README.md).
// Field values are plain integers here; encode() checks that each fits its configured width.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "vacc/isa/config.h"

namespace vacc::isa {

enum class Opcode : uint8_t { kLoad = 0, kStore = 1, kGemm = 2, kFinish = 3, kAlu = 4 };
// kClip and kShrClip are extensions (extensions.alu_clip, extensions.alu_shr_clip): legal only
// where the config switches them on.
enum class AluOp : uint8_t {
  kMin = 0,
  kMax = 1,
  kAdd = 2,
  kShr = 3,
  kMul = 4,
  kClip = 5,
  kShrClip = 6
};
inline constexpr int kNumAluOps = 7;
const char *opcode_name(Opcode op);
const char *alu_op_name(AluOp op);  // "min", "max", "add", "shr", "mul", "clip", "shr_clip"
// Whether `config` has the operation; "" when it does, else why not and what to do.
std::string alu_op_unavailable(const HwConfig &config, AluOp op);
// Why a GEMM may not carry the assign flag on `config` (extensions.gemm_assign off).
std::string gemm_assign_unavailable(const HwConfig &config);
// Why a STORE may not write INP on `config` (extensions.store_inp off).
std::string store_inp_unavailable(const HwConfig &config);
// CLIP's bounds from its operand b: low = sign-extended b[7:0], high = sign-extended b[15:8].
inline constexpr int kClipBoundBits = 8;
inline bool clip_bound_fits(int64_t v) {
  return v >= -(int64_t{1} << (kClipBoundBits - 1)) && v < (int64_t{1} << (kClipBoundBits - 1));
}
inline int32_t clip_low(int32_t b) { return static_cast<int8_t>(b & 0xff); }
inline int32_t clip_high(int32_t b) { return static_cast<int8_t>((b >> 8) & 0xff); }
// SHR_CLIP shifts by its operand b (as SHR) and clips to the bounds its immediate holds as
// CLIP's operand does: clip(a >> b, clip_low(imm), clip_high(imm)). With a vector operand
// (use_imm 0) the immediate is free for the bounds; with use_imm, b is the immediate too.
// The 16-bit immediate of a CLIP to [low, high] (both in [-128, 127]).
inline int32_t clip_imm(int32_t low, int32_t high) {
  return static_cast<int16_t>(static_cast<uint16_t>(((high & 0xff) << 8) | (low & 0xff)));
}

// The engine that executes an instruction. LOAD of INP/WGT runs on the load engine; LOAD of
// UOP/ACC runs on the compute engine, which owns those scratchpads; STORE on the store engine.
enum class Engine : uint8_t { kLoad = 0, kCompute = 1, kStore = 2 };
inline constexpr int kNumEngines = 3;
const char *engine_name(Engine e);  // "load", "compute", "store"

// Dependency flags: pop a token from the previous / next engine before starting, push one to
// the previous / next engine when done. The pipeline order is load -> compute -> store.
struct DepFlags {
  bool pop_prev = false;
  bool pop_next = false;
  bool push_prev = false;
  bool push_next = false;
  bool operator==(const DepFlags &) const = default;
};

// LOAD (DRAM -> scratchpad) and STORE (ACC scratchpad -> DRAM, narrowed to OUT).
// DRAM addresses count elements of the memory's kind from the device-memory base.
struct MemInsn {
  Opcode opcode = Opcode::kLoad;  // kLoad or kStore
  DepFlags deps;
  MemId mem = MemId::kInp;
  uint32_t sram_base = 0;
  uint32_t dram_base = 0;
  uint32_t y_size = 0;
  uint32_t x_size = 0;
  uint32_t x_stride = 0;
  uint32_t pad_top = 0;
  uint32_t pad_bottom = 0;
  uint32_t pad_left = 0;
  uint32_t pad_right = 0;
  bool operator==(const MemInsn &) const = default;
};

// Two loop levels (outer extent, inner extent) and a per-level index factor for each operand.
struct LoopFactors {
  uint32_t out = 0;
  uint32_t in = 0;
  bool operator==(const LoopFactors &) const = default;
};

// extensions.alu_hold: an ALU with a vector operand that every iteration of its loops reads at
// the same index (one micro-op, both src factors 0) reads it once and holds it, so its micro-ops
// after the first issue every cycle instead of every second (timing only; isa/README.md).
inline bool alu_holds_operand(const HwConfig &config, bool use_imm, uint32_t uops,
                              const LoopFactors &src) {
  return config.alu_hold && !use_imm && uops == 1 && src.out == 0 && src.in == 0;
}

// GEMM: for i < loop_out, j < loop_in, uop in [uop_begin, uop_end):
//   acc[dst'] = reset ? 0 : acc[dst'] + inp[src'] * wgt[wgt']^T, x' = x + i*f.out + j*f.in
struct GemmInsn {
  DepFlags deps;
  bool reset = false;
  uint32_t uop_begin = 0;
  uint32_t uop_end = 0;
  uint32_t loop_out = 1;
  uint32_t loop_in = 1;
  LoopFactors acc;
  LoopFactors inp;
  LoopFactors wgt;
  bool overlap = false;  // may run beside earlier ALUs (isa/README.md, "Overlap")
  // extensions.gemm_assign: each micro-op writes its product instead of adding it to ACC.
  bool assign = false;
  bool operator==(const GemmInsn &) const = default;
};

// ALU: the same loops on ACC tiles: acc[dst'] = op(acc[dst'], use_imm ? imm : acc[src']).
struct AluInsn {
  DepFlags deps;
  AluOp op = AluOp::kAdd;
  uint32_t uop_begin = 0;
  uint32_t uop_end = 0;
  uint32_t loop_out = 1;
  uint32_t loop_in = 1;
  LoopFactors dst;
  LoopFactors src;
  bool use_imm = false;
  int32_t imm = 0;
  bool overlap = false;  // may run beside earlier GEMMs (isa/README.md, "Overlap")
  bool operator==(const AluInsn &) const = default;
};

struct FinishInsn {
  DepFlags deps;
  bool operator==(const FinishInsn &) const = default;
};

using Insn = std::variant<MemInsn, GemmInsn, AluInsn, FinishInsn>;

Opcode opcode_of(const Insn &insn);
const DepFlags &deps_of(const Insn &insn);
DepFlags &deps_of(Insn &insn);
Engine engine_of(const Insn &insn);
// "LOAD INP", "STORE OUT", "GEMM", "ALU", "FINISH": how diagnostics name an instruction.
std::string insn_label(const Insn &insn);

// A micro-op: scratchpad indices for GEMM (dst: ACC, src: INP, wgt: WGT) or ALU (dst, src: ACC).
struct Uop {
  uint32_t dst = 0;
  uint32_t src = 0;
  uint32_t wgt = 0;
  bool operator==(const Uop &) const = default;
};

// 128-bit instruction word, little-endian: bits [0,64) in lo, [64,128) in hi.
struct InsnWord {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool operator==(const InsnWord &) const = default;
};
inline constexpr int kInsnBytes = 16;

}  // namespace vacc::isa
