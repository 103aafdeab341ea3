// Disassembly: canonical text that assemble() turns back into the same bytes.
#include <fmt/format.h>

#include "vacc/isa/assembly.h"
#include "vacc/isa/encoding.h"

namespace vacc::isa {

namespace {

std::string deps_text(const DepFlags &d) {
  std::string s;
  if (d.pop_prev) s += " pop_prev";
  if (d.pop_next) s += " pop_next";
  if (d.push_prev) s += " push_prev";
  if (d.push_next) s += " push_next";
  return s;
}

// "name+k" when the address falls in a region of the program, else the number.
std::string dram_text(const HwConfig &config, const MemInsn &m, const Program *program) {
  // STORE INP's dram_base is an INP index, never in a DRAM region.
  if (program && !(m.opcode == Opcode::kStore && m.mem == MemId::kInp)) {
    const uint64_t tile = config.tile_bytes(m.mem);
    for (const auto &r : program->regions) {
      if (r.kind == RegionKind::kInstructions) continue;
      if (m.mem == MemId::kUop && r.kind != RegionKind::kUops) continue;
      const uint64_t first = r.offset / tile, count = r.bytes / tile;
      if (m.dram_base < first || m.dram_base >= first + count) continue;
      const std::string name = r.kind == RegionKind::kUops ? "@uops" : r.name;
      const uint64_t k = m.dram_base - first;
      return k == 0 ? name : fmt::format("{}+{}", name, k);
    }
  }
  return std::to_string(m.dram_base);
}

std::string loops_text(uint32_t begin, uint32_t end, uint32_t out, uint32_t in) {
  return fmt::format("uops={}:{} loop={},{}", begin, end, out, in);
}

}  // namespace

std::string format_insn(const HwConfig &config, const Insn &insn, const Program *program) {
  if (const auto *m = std::get_if<MemInsn>(&insn)) {
    return fmt::format("{}.{} sram={} dram={} y={} x={} stride={} pad={},{},{},{}{}",
                       m->opcode == Opcode::kLoad ? "load" : "store", mem_id_name(m->mem),
                       m->sram_base, dram_text(config, *m, program), m->y_size, m->x_size,
                       m->x_stride, m->pad_top, m->pad_bottom, m->pad_left, m->pad_right,
                       deps_text(m->deps));
  }
  if (const auto *g = std::get_if<GemmInsn>(&insn)) {
    return fmt::format("gemm {} acc={},{} inp={},{} wgt={},{}{}{}{}{}",
                       loops_text(g->uop_begin, g->uop_end, g->loop_out, g->loop_in), g->acc.out,
                       g->acc.in, g->inp.out, g->inp.in, g->wgt.out, g->wgt.in,
                       g->reset ? " reset" : "", g->assign ? " assign" : "",
                       g->overlap ? " overlap" : "", deps_text(g->deps));
  }
  if (const auto *a = std::get_if<AluInsn>(&insn)) {
    std::string operand = a->use_imm ? fmt::format(" imm={}", a->imm)
                                     : (a->imm ? fmt::format(" unused_imm={}", a->imm) : "");
    // SHR_CLIP's bounds beside its vector operand.
    if (a->op == AluOp::kShrClip && !a->use_imm)
      operand = fmt::format(" bounds={},{}", clip_low(a->imm), clip_high(a->imm));
    // CLIP's two bounds share the immediate: say which they are.
    const std::string bounds =
        (a->op == AluOp::kClip || a->op == AluOp::kShrClip) && a->use_imm
            ? fmt::format("  # [{}, {}]", clip_low(a->imm), clip_high(a->imm))
            : "";
    return fmt::format("alu.{} {} dst={},{} src={},{}{}{}{}{}", alu_op_name(a->op),
                       loops_text(a->uop_begin, a->uop_end, a->loop_out, a->loop_in), a->dst.out,
                       a->dst.in, a->src.out, a->src.in, operand, a->overlap ? " overlap" : "",
                       deps_text(a->deps), bounds);
  }
  return "finish" + deps_text(std::get<FinishInsn>(insn).deps);
}

std::string disassemble(const HwConfig &config, const Program &program) {
  std::string out = fmt::format("# vacc program for config '{}': {} instructions\n",
                                program.config_name, program.insn_count);
  const Region *uops = nullptr;
  for (const auto &r : program.regions) {
    if (r.kind == RegionKind::kInstructions) continue;
    if (r.kind == RegionKind::kUops) {
      uops = &r;
      continue;
    }
    out += fmt::format(".region {} {} {} {}\n", r.name, region_kind_name(r.kind),
                       mem_id_name(r.mem), r.bytes / config.tile_bytes(r.mem));
    // Non-zero data in 32-byte lines.
    for (uint64_t at = 0; at < r.bytes; at += 32) {
      const uint64_t n = std::min<uint64_t>(32, r.bytes - at);
      const uint8_t *p = program.dram.data() + r.offset + at;
      bool nonzero = false;
      for (uint64_t i = 0; i < n; ++i) nonzero |= p[i] != 0;
      if (!nonzero) continue;
      // Two digits per byte from a table: a region of megabytes is millions of bytes, and a
      // format call per byte made printing it the slow part of a disassembly.
      static constexpr char kDigits[] = "0123456789abcdef";
      std::string hex(2 * n, '0');
      for (uint64_t i = 0; i < n; ++i) {
        hex[2 * i] = kDigits[p[i] >> 4];
        hex[2 * i + 1] = kDigits[p[i] & 0xf];
      }
      out += fmt::format(".data {} {} {}\n", r.name, at, hex);
    }
  }
  if (uops) {
    const int ub = config.uop_bytes();
    for (uint64_t i = 0; i < uops->bytes / ub; ++i) {
      uint64_t bits = 0;
      for (int b = 0; b < ub; ++b) bits |= uint64_t{program.dram[uops->offset + i * ub + b]} << (8 * b);
      const Uop u = decode_uop(config, bits);
      out += fmt::format(".uop dst={} src={} wgt={}\n", u.dst, u.src, u.wgt);
    }
  }
  for (const auto &insn : program.instructions(config))
    out += format_insn(config, insn, &program) + "\n";
  return out;
}

}  // namespace vacc::isa
