#include "vacc/isa/insn.h"

#include <fmt/format.h>

namespace vacc::isa {

const char *opcode_name(Opcode op) {
  switch (op) {
    case Opcode::kLoad: return "LOAD";
    case Opcode::kStore: return "STORE";
    case Opcode::kGemm: return "GEMM";
    case Opcode::kFinish: return "FINISH";
    case Opcode::kAlu: return "ALU";
  }
  return "?";
}

const char *alu_op_name(AluOp op) {
  switch (op) {
    case AluOp::kMin: return "min";
    case AluOp::kMax: return "max";
    case AluOp::kAdd: return "add";
    case AluOp::kShr: return "shr";
    case AluOp::kMul: return "mul";
    case AluOp::kClip: return "clip";
    case AluOp::kShrClip:
      return "shr_clip";
  }
  return "?";
}

std::string alu_op_unavailable(const HwConfig &config, AluOp op) {
  if (op == AluOp::kClip && !config.alu_clip)
    return fmt::format(
        "ALU operation clip is the extension extensions.alu_clip, which config '{}' has off; "
        "switch it on in the config or use max and min",
        config.name);
  if (op == AluOp::kShrClip && !config.alu_shr_clip)
    return fmt::format(
        "ALU operation shr_clip is the extension extensions.alu_shr_clip, which config '{}' has "
        "off; switch it on in the config or use shr, then clip (or max and min)",
        config.name);
  return "";
}

std::string gemm_assign_unavailable(const HwConfig &config) {
  return fmt::format(
      "GEMM flag assign is the extension extensions.gemm_assign, which config '{}' has off; "
      "switch it on in the config or zero the accumulators with a reset GEMM",
      config.name);
}

std::string store_inp_unavailable(const HwConfig &config) {
  return fmt::format(
      "STORE INP is the extension extensions.store_inp, which config '{}' has off; switch it "
      "on in the config or store to OUT and load the tiles back",
      config.name);
}

const char *engine_name(Engine e) {
  switch (e) {
    case Engine::kLoad: return "load";
    case Engine::kCompute: return "compute";
    case Engine::kStore: return "store";
  }
  return "?";
}

Opcode opcode_of(const Insn &insn) {
  struct {
    Opcode operator()(const MemInsn &m) const { return m.opcode; }
    Opcode operator()(const GemmInsn &) const { return Opcode::kGemm; }
    Opcode operator()(const AluInsn &) const { return Opcode::kAlu; }
    Opcode operator()(const FinishInsn &) const { return Opcode::kFinish; }
  } visitor;
  return std::visit(visitor, insn);
}

const DepFlags &deps_of(const Insn &insn) {
  return std::visit([](const auto &i) -> const DepFlags & { return i.deps; }, insn);
}

DepFlags &deps_of(Insn &insn) {
  return std::visit([](auto &i) -> DepFlags & { return i.deps; }, insn);
}

Engine engine_of(const Insn &insn) {
  if (const auto *m = std::get_if<MemInsn>(&insn)) {
    if (m->opcode == Opcode::kStore) return Engine::kStore;
    return (m->mem == MemId::kInp || m->mem == MemId::kWgt) ? Engine::kLoad : Engine::kCompute;
  }
  return Engine::kCompute;
}

std::string insn_label(const Insn &insn) {
  std::string label = opcode_name(opcode_of(insn));
  if (const auto *m = std::get_if<MemInsn>(&insn)) {
    label += ' ';
    for (const char *c = mem_id_name(m->mem); *c; ++c) label += static_cast<char>(*c - 'a' + 'A');
  }
  return label;
}

}  // namespace vacc::isa
