// One walk of a loop nest with concrete loop variables, the one evaluator of loop IR: each For
// runs its iterations in order with its variable bound, each IfThenElse evaluates its condition
// (through IntEvaluator), Seq and Attr run their parts, Prefetch does nothing. What any other
// statement does is the subclass's: the loop-IR interpreter (interpreter.h) computes values,
// accelerator code generation (compiler/lower/commands/emit_commands.cc) emits one command per
// intrinsic statement instance.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "vacc/tir/int_eval.h"
#include "vacc/tir/node.h"

namespace vacc::tir {

class LoopWalker : protected IntEvaluator {
 public:
  void exec(const Stmt &s);

 protected:
  // Before a loop's first iteration (a subclass may refuse the loop there), at each iteration
  // (its variable already bound to `i`) and after its last.
  virtual void enter_loop(const For *) {}
  virtual void at_iteration(const For *, int64_t /*i*/) {}
  virtual void leave_loop(const For *) {}

  virtual void exec_store(const Store *op) = 0;
  virtual void exec_allocate(const Allocate *op) = 0;
  virtual void exec_dma(const Dma *op) = 0;
  virtual void exec_gemm(const Gemm *op) = 0;
  virtual void exec_alu(const Alu *op) = 0;
  virtual void exec_dep_push(const DepPush *op) = 0;
  virtual void exec_dep_pop(const DepPop *op) = 0;

  // The value of a loop variable, or null outside its loop.
  const int64_t *loop_value(const VarNode *var) const {
    auto it = env_.find(var);
    return it == env_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<const VarNode *, int64_t> env_;
};

}  // namespace vacc::tir
