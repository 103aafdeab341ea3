// Bit layout of instructions and micro-ops for one config, and encode/decode between the
// typed structs and 128-bit words. Fields are packed from bit 0 upward in the order listed by
// insn_fields(); the RTL's parameter package is generated from the same tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/insn.h"

namespace vacc::isa {

struct Field {
  std::string name;  // e.g. "sram_base", "acc_factor_out"
  int offset = 0;    // first bit
  int width = 0;     // bits
  bool is_signed = false;
};

// Fixed widths (the rest follow from the config).
inline constexpr int kOpcodeBits = 3;
// A GEMM with the assign flag (extensions.gemm_assign): GEMM's fields under this opcode.
inline constexpr uint64_t kGemmAssignOpcode = 5;
inline constexpr int kMemIdBits = 3;
inline constexpr int kDramBaseBits = 32;
inline constexpr int kDmaSizeBits = 16;  // y_size, x_size, x_stride
inline constexpr int kPadBits = 4;
inline constexpr int kLoopBits = 14;
inline constexpr int kAluOpBits = 3;
inline constexpr int kImmBits = 16;

// The fields of an instruction kind, in packing order, with offsets for this config.
// Every kind starts with opcode, pop_prev, pop_next, push_prev, push_next.
std::vector<Field> insn_fields(const HwConfig &config, Opcode op);
// Bits used by an instruction kind (<= 128 for a valid config).
int insn_bits(const HwConfig &config, Opcode op);
// The micro-op fields: dst, src, wgt.
std::vector<Field> uop_fields(const HwConfig &config);

// Throws vacc::Error naming the field and its width when a value does not fit.
InsnWord encode(const HwConfig &config, const Insn &insn);
// Throws vacc::Error on an unknown opcode or invalid memory id / ALU op.
Insn decode(const HwConfig &config, const InsnWord &word);

uint64_t encode_uop(const HwConfig &config, const Uop &uop);
Uop decode_uop(const HwConfig &config, uint64_t bits);

// Little-endian byte serialization of instruction words.
void store_word(const InsnWord &word, uint8_t *bytes);
InsnWord load_word(const uint8_t *bytes);

}  // namespace vacc::isa
