#include "timed_program.h"

#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"

namespace vacc::sim::perf {
namespace {

void read_uop_banks(const isa::HwConfig &config, const std::vector<uint8_t> &dram,
                    const isa::MemInsn &load, std::vector<uint8_t> &banks) {
  const uint64_t bytes = static_cast<uint64_t>(config.uop_bytes());
  for (uint64_t y = 0; y < load.y_size; ++y)
    for (uint64_t x = 0; x < load.x_size; ++x) {
      const uint64_t at = (load.dram_base + y * load.x_stride + x) * bytes;
      uint64_t bits = 0;
      if (at + bytes <= dram.size())
        for (uint64_t b = 0; b < bytes; ++b) bits |= uint64_t{dram[at + b]} << (8 * b);
      banks.push_back(static_cast<uint8_t>(config.acc_bank(isa::decode_uop(config, bits).dst)));
    }
}

// The micro-op loop nest of a GEMM or an ALU.
template <typename Insn>
void set_loops(TimedInsn &t, const Insn &insn) {
  t.uop_begin = insn.uop_begin;
  t.uop_end = insn.uop_end;
  if (insn.uop_begin < insn.uop_end)
    t.iterations = uint64_t{insn.loop_out} * insn.loop_in * (insn.uop_end - insn.uop_begin);
  t.overlap = insn.overlap;
}

}  // namespace

TimedProgram decode_timed_program(const isa::HwConfig &config, const std::vector<uint8_t> &dram,
                                  uint64_t insn_offset, uint32_t insn_count) {
  if (insn_offset % isa::kInsnBytes != 0 ||
      insn_offset + uint64_t{insn_count} * isa::kInsnBytes > dram.size())
    fail("the instruction stream lies outside device memory");
  TimedProgram p;
  p.insns.reserve(insn_count);
  p.decoded.reserve(insn_count);
  for (uint32_t i = 0; i < insn_count; ++i) {
    const isa::Insn insn = isa::decode(
        config, isa::load_word(dram.data() + insn_offset + uint64_t{i} * isa::kInsnBytes));
    TimedInsn t;
    t.engine = isa::engine_of(insn);
    t.deps = isa::deps_of(insn);
    if (const auto *m = std::get_if<isa::MemInsn>(&insn)) {
      t.kind = m->opcode == isa::Opcode::kLoad ? Kind::kLoad : Kind::kStore;
      t.mem = m->mem;
      t.dram_base = m->dram_base;
      t.y_size = m->y_size;
      t.x_size = m->x_size;
      t.x_stride = m->x_stride;
      t.pad_top = m->pad_top;
      t.pad_bottom = m->pad_bottom;
      t.pad_left = m->pad_left;
      t.pad_right = m->pad_right;
      t.sram_base = m->sram_base;
      if (t.kind == Kind::kLoad && t.mem == isa::MemId::kUop) {
        t.uop_banks_at = static_cast<uint32_t>(p.uop_banks.size());
        read_uop_banks(config, dram, *m, p.uop_banks);
      }
    } else if (const auto *g = std::get_if<isa::GemmInsn>(&insn)) {
      set_loops(t, *g);
      t.kind = Kind::kGemm;
      t.reset = g->reset;
      p.gemms.push_back(i);
    } else if (const auto *a = std::get_if<isa::AluInsn>(&insn)) {
      set_loops(t, *a);
      t.kind = Kind::kAlu;
      t.use_imm = a->use_imm;
      t.hold = a->uop_end > a->uop_begin &&
               isa::alu_holds_operand(config, a->use_imm, a->uop_end - a->uop_begin, a->src);
      p.alus.push_back(i);
    }
    p.order[static_cast<int>(t.engine)].push_back(i);
    p.insns.push_back(t);
    p.decoded.push_back(insn);
  }
  return p;
}

}  // namespace vacc::sim::perf
