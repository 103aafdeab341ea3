// One walk of a loop nest with concrete loop variables, the one evaluator of loop IR: each For
// runs its iterations in order with its variable bound, each IfThenElse evaluates its condition
// (through IntEvaluator), Seq and Attr run their parts, Prefetch does nothing. What any other
// statement does is the subclass's: the loop-IR interpreter (interpreter.h) computes values,
// accelerator code generation (compiler/lower/commands/emit_commands.cc) emits one command per
// intrinsic statement instance.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "vacc/tir/int_eval.h"
#include "vacc/tir/node.h"

namespace vacc::tir {

class LoopWalker : protected IntEvaluator {
 public:
  void exec(const Stmt &s);

 protected:
  // Before a loop's first iteration: a subclass may refuse the loop there.
  virtual void enter_loop(const For *) {}

  virtual void exec_store(const Store *op) = 0;
  virtual void exec_allocate(const Allocate *op) = 0;
  virtual void exec_dma(const Dma *op) = 0;
  virtual void exec_gemm(const Gemm *op) = 0;
  virtual void exec_alu(const Alu *op) = 0;
  virtual void exec_dep_push(const DepPush *op) = 0;
  virtual void exec_dep_pop(const DepPop *op) = 0;

  // The loops around the statement being run, outermost first, each with its iteration.
  using LoopStack = std::vector<std::pair<const VarNode *, int64_t>>;
  const LoopStack &loops() const { return loops_; }

  // The value of a loop variable (the innermost loop of that variable), or null outside it.
  const int64_t *loop_value(const VarNode *var) const {
    for (auto it = loops_.rbegin(); it != loops_.rend(); ++it)
      if (it->first == var) return &it->second;
    return nullptr;
  }

 private:
  LoopStack loops_;
};

}  // namespace vacc::tir
