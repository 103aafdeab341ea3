// With the overlap flag the GEMM core and the ALU run side by side, so every GEMM-core cycle
// spent zeroing an accumulator is a cycle of MACs lost. This pass turns each GEMM reset into
// the ALU instruction that writes the same zeros (multiply by the immediate 0 over the same
// micro-ops and loops): it runs on the ALU while the other thread's GEMMs keep the core busy.
// Its footprint is the reset's (the ACC range, nothing read), so the token and stagger passes
// treat it alike.
#include "codegen_commands.h"

namespace vacc::lower {

CodegenCommands reset_on_alu(const CodegenCommands &ops) {
  CodegenCommands out = ops;
  for (CodegenCommand &op : out) {
    const auto *g = std::get_if<isa::GemmCommand>(&op.cmd);
    if (!g || !g->reset) continue;
    isa::AluCommand a;
    a.op = isa::AluOp::kMul;
    a.loop_out = g->loop_out;
    a.loop_in = g->loop_in;
    a.dst = g->acc;
    a.use_imm = true;
    a.imm = 0;
    op.cmd = a;
    for (isa::Uop &u : op.uops) u = isa::Uop{u.dst, 0, 0};
  }
  return out;
}

bool is_alu_reset(const CodegenCommand &op) {
  const auto *a = std::get_if<isa::AluCommand>(&op.cmd);
  return a && a->op == isa::AluOp::kMul && a->use_imm && a->imm == 0;
}

}  // namespace vacc::lower
