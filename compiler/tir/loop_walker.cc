#include "vacc/tir/loop_walker.h"

namespace vacc::tir {

void LoopWalker::exec(const Stmt &s) {
  switch (s.kind()) {
    case StmtKind::kFor: {
      const For *op = s.as<For>();
      enter_loop(op);
      loops_.push_back({op->var.get(), 0});
      for (int64_t i = 0; i < op->extent; ++i) {
        loops_.back().second = i;
        exec(op->body);
      }
      loops_.pop_back();
      return;
    }
    case StmtKind::kIfThenElse: {
      const IfThenElse *op = s.as<IfThenElse>();
      if (eval(op->cond)) {
        exec(op->then_case);
      } else if (op->else_case.defined()) {
        exec(op->else_case);
      }
      return;
    }
    case StmtKind::kSeq:
      for (const Stmt &c : s.as<Seq>()->stmts) exec(c);
      return;
    case StmtKind::kAttr:
      return exec(s.as<Attr>()->body);
    case StmtKind::kPrefetch:  // a hint to a CPU cache: nothing to compute or emit
      return;
    case StmtKind::kStore:
      return exec_store(s.as<Store>());
    case StmtKind::kAllocate:
      return exec_allocate(s.as<Allocate>());
    case StmtKind::kDma:
      return exec_dma(s.as<Dma>());
    case StmtKind::kGemm:
      return exec_gemm(s.as<Gemm>());
    case StmtKind::kAlu:
      return exec_alu(s.as<Alu>());
    case StmtKind::kDepPush:
      return exec_dep_push(s.as<DepPush>());
    case StmtKind::kDepPop:
      return exec_dep_pop(s.as<DepPop>());
  }
}

}  // namespace vacc::tir
