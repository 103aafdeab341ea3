#include "vacc/isa/error_status.h"

#include <fmt/format.h>

#include <cctype>

#include "vacc/isa/config.h"
#include "vacc/isa/registers.h"

namespace vacc::isa {

std::string insn_summary(const Insn &insn) {
  std::string s;
  if (const auto *m = std::get_if<MemInsn>(&insn)) {
    s = fmt::format("{}.{}", opcode_name(m->opcode), mem_id_name(m->mem));
  } else if (const auto *a = std::get_if<AluInsn>(&insn)) {
    s = fmt::format("alu.{}", alu_op_name(a->op));
  } else {
    s = opcode_name(opcode_of(insn));
  }
  for (char &ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const DepFlags &d = deps_of(insn);
  if (d.pop_prev) s += " pop_prev";
  if (d.pop_next) s += " pop_next";
  if (d.push_prev) s += " push_prev";
  if (d.push_next) s += " push_next";
  return s;
}

std::string error_status_message(uint32_t status, uint32_t insn, const std::vector<Insn> *program) {
  const bool known = program && insn < program->size();
  if (status & reg::kErrorIllegalInsn)
    return fmt::format(
        "illegal instruction at index {}{}; the accelerator stopped with error status {:#x}", insn,
        !program ? ""
        : known  ? " (decoded as " + insn_summary((*program)[insn]) + ")"
                 : " (it does not decode)",
        status);
  if (status & reg::kErrorRange)
    return fmt::format(
        "instruction {}{} reaches beyond a scratchpad; the accelerator stopped with error status "
        "{:#x} (`vacc sim --engine fsim` on the program names the field and index)",
        insn, known ? " (" + insn_summary((*program)[insn]) + ")" : "", status);
  if (status & reg::kErrorDeadlock)
    return fmt::format(
        "the accelerator reached its cycle limit at instruction {} (a deadlock, or a limit too "
        "low for the program); error status {:#x}",
        insn, status);
  if (status) return fmt::format("the accelerator reported error status {:#x}", status);
  return "";
}

}  // namespace vacc::isa
