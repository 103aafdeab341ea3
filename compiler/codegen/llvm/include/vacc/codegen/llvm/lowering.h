// The loop-IR -> LLVM IR lowering shared by the LLVM backends (codegen/cpu for the host JIT,
// codegen/gpu for NVPTX): one LlvmLowering per Func. lowering.cc holds the types and
// functions; lower_expr.cc the expressions, loads and stores (scalar and vector);
// lower_stmt.cc the statements and loops (unroll, vectorize). A backend subclasses it for what
// its target decides: the entry point, parallel and GPU-bound loops, math calls that are not
// LLVM intrinsics on it, and where buffers are allocated.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <unordered_map>

#include "vacc/tir/func.h"
#include "vacc/tir/node.h"

namespace llvm {
class TargetMachine;
}  // namespace llvm

namespace vacc::codegen {

using tir::DataType;
using tir::Expr;
using tir::ExprKind;
using tir::Stmt;
using tir::StmtKind;

inline constexpr int64_t kMaxUnroll = 64;
inline constexpr int64_t kMaxLanes = 64;
inline constexpr int64_t kMaxStackBytes = 256 * 1024;

// True when evaluating e may fault where its Select guard is false (a load or an integer
// division), so a Select around it must branch instead of evaluating both sides; loads that
// `guard` (the Select's condition, evaluated in any case) reads too are safe.
bool may_fault(const Expr &e, const Expr &guard = Expr());
// Coefficient of v in the row-major flat index of `indices` into b; false when not affine.
bool flat_coeff(const tir::Buffer &b, const std::vector<Expr> &indices, const tir::Var &v,
                int64_t *coeff);

// LLVM's O3 pipeline for tm's target (the loop and SLP vectorizers on when `vectorize`).
void optimize_module(llvm::Module &m, llvm::TargetMachine *tm, bool vectorize);

class LlvmLowering {
 public:
  LlvmLowering(const tir::Func &f, llvm::LLVMContext &ctx, llvm::Module &m);
  virtual ~LlvmLowering() = default;

 protected:
  // "CPU backend", "GPU backend": how diagnostics name the backend.
  virtual const char *backend() const = 0;

  // ------------------------------------------------------------------------------ types

  llvm::Type *scalar_type(DataType t, bool in_memory);
  llvm::Type *mem_type(DataType t) { return scalar_type(t, true); }
  llvm::Type *reg_type(DataType t, int lanes);
  bool is_vec(llvm::Value *v) { return v->getType()->isVectorTy(); }
  llvm::Value *splat(llvm::Value *v);
  void unify(llvm::Value *&a, llvm::Value *&b);

  // --------------------------------------------------------------------------- functions

  // A function over `bufs` (noalias pointers) and `vars` (scalars); with `range`, two more
  // i64 parameters (begin, end). Rebinds bufs_/vars_ to its parameters.
  llvm::Function *make_function(const std::string &name,
                                const std::vector<const tir::BufferNode *> &bufs,
                                const std::vector<const tir::VarNode *> &vars, bool range);

  // Emits `body` as the code of fn (entry block, ret void), then restores the caller's state.
  void emit_in(llvm::Function *fn, const std::function<void()> &body);

  // ------------------------------------------------------------------------- expressions

  llvm::Value *expr(const Expr &e);

  llvm::Value *var(const tir::VarNode *v);

  llvm::Value *binary(ExprKind k, const Expr &ea, const Expr &eb);

  // Floor division / modulo of signed integers.
  llvm::Value *floor_div(llvm::Value *a, llvm::Value *b, bool div);

  // The ISA's SHR: a >> min(b, bits-1) for b >= 0, a << min(-b, bits-1) otherwise.
  llvm::Value *shr(llvm::Value *a, llvm::Value *b, DataType t);

  llvm::Value *cast(DataType to, const Expr &from_e);

  // Math calls: the LLVM intrinsic of each op; tanh has none, so the base fails for it.
  virtual llvm::Value *call(const tir::Call *op);
  // The LLVM intrinsic of op, or not_intrinsic.
  static llvm::Intrinsic::ID call_intrinsic(tir::CallOp op);

  llvm::Value *select(const tir::Select *op);

  // ------------------------------------------------------------------------------ memory

  llvm::Value *buffer_ptr(const tir::Buffer &b);

  // The flat row-major index as i64 (scalar or vector, following the current mode).
  llvm::Value *flat_index(const tir::Buffer &b, const std::vector<Expr> &indices);

  // Evaluates fn with the vectorized variable bound to its base (lane 0) in scalar mode.
  template <typename F>
  auto at_lane0(F fn) {
    const tir::VarNode *saved = vvar_;
    vvar_ = nullptr;
    auto r = fn();
    vvar_ = saved;
    return r;
  }

  enum class Access { kScalar, kContiguous, kGather };
  Access access_kind(const tir::Buffer &b, const std::vector<Expr> &indices);

  llvm::Value *from_memory(llvm::Value *v, DataType t);
  llvm::Value *to_memory(llvm::Value *v, DataType t);

  llvm::Value *load(const tir::Buffer &b, const std::vector<Expr> &indices);

  void store(const tir::Store *op);

  // --------------------------------------------------------------------------- statements

  void stmt(const Stmt &s);

  void if_then_else(const tir::IfThenElse *op);

  // An annotation: its body (a backend may give a marker meaning, e.g. a GPU barrier).
  virtual void attr(const tir::Attr *op);

  // A software prefetch of the element's cache line for reading (llvm.prefetch, kept in all
  // cache levels); a backend without one leaves it out (it changes no value).
  virtual void prefetch(const tir::Prefetch *op);

  // A buffer of the body's extent: on the stack (the entry block's allocas) by default.
  virtual void allocate(const tir::Allocate *op);
  // The stack slot of an Allocate's buffer, in the entry block.
  llvm::Value *stack_buffer(const tir::Buffer &buf);

  llvm::MDNode *loop_hint(const char *key);

  // for (iv = begin; iv < end; ++iv) body(iv), with begin < end; iv in i64.
  void counted_loop(llvm::Value *begin, llvm::Value *end, llvm::MDNode *md,
                    const std::function<void(llvm::Value *)> &body);

  void bind(const tir::Var &v, llvm::Value *i64);

  void serial(const tir::For *op, llvm::MDNode *md);

  // Unrolled and vectorized loops as described in lowering.cc; parallel ones through
  // parallel(); the rest (GPU-bound loops included) serial.
  virtual void loop(const tir::For *op);

  // Lanes for explicit vector code, or 0 when the body does not allow it: only stores whose
  // index moves with the loop variable, and no buffer both stored and read at another index.
  int vector_lanes(const tir::For *op);

  // A vectorized loop: chunks of `lanes` (a power of two) in a loop, or, when the loop is one
  // chunk of any length, pieces of descending powers of two (56 = 32 + 16 + 8): the backend
  // handles only power-of-two vectors well, and constant offsets keep accumulator tiles in
  // registers.
  void vectorized(const tir::For *op, int lanes);

  // A parallel loop of more than one iteration: serial unless the backend runs it in parallel.
  virtual void parallel(const tir::For *op);

  const tir::Func &f_;
  llvm::LLVMContext &ctx_;
  llvm::Module &m_;
  llvm::IRBuilder<> b_;
  llvm::Function *fn_ = nullptr;
  llvm::BasicBlock *alloca_block_ = nullptr;
  std::unordered_map<const tir::BufferNode *, llvm::Value *> bufs_;
  std::unordered_map<const tir::VarNode *, llvm::Value *> vars_;
  const tir::VarNode *vvar_ = nullptr;  // the variable of the loop being vectorized
  tir::Var vvar_ref_;
  int lanes_ = 0;
  int parallel_count_ = 0;
};

}  // namespace vacc::codegen
