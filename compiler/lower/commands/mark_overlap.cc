// The overlap flag (isa/README.md, "Overlap"): a GEMM or ALU that stays inside one ACC bank
// (half) waits only for the other compute unit's work on that bank, not for all of it. This
// pass flags every GEMM/ALU whose ACC ranges lie in the bank of its first micro-op's dst.
// Virtual threads whose ACC buffers plan_scratchpads put in different banks then requantize
// on the ALU while the other thread's GEMMs run. The flag changes no result (the hardware
// orders all work on a bank) and fsim checks the promise on every run.
#include "codegen_commands.h"
#include "footprint.h"

namespace vacc::lower {

CodegenCommands mark_overlap(const CodegenCommands &ops, const isa::HwConfig &config) {
  CodegenCommands out = ops;
  for (CodegenCommand &op : out) {
    auto *g = std::get_if<isa::GemmCommand>(&op.cmd);
    auto *a = std::get_if<isa::AluCommand>(&op.cmd);
    if ((!g && !a) || op.uops.empty()) continue;
    const int bank = config.acc_bank(op.uops.front().dst);
    bool one_bank = true;
    for (const Range &r : footprint(op).ranges)
      if (r.mem == static_cast<int>(isa::MemId::kAcc) && r.lo < r.hi)
        one_bank &= config.acc_bank(r.lo) == bank && config.acc_bank(r.hi - 1) == bank;
    if (g)
      g->overlap = one_bank;
    else
      a->overlap = one_bank;
  }
  return out;
}

}  // namespace vacc::lower
