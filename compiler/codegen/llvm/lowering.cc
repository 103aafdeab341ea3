// Lowers the loop IR to LLVM IR.
//
// Scalars: int/uint of N bits -> iN (signedness picks the instruction), bool -> i1 in registers
// and i8 in memory, float32 -> float. Integer Div/Mod are floor division/modulo as in the IR;
// Shr is the ISA's shift (a negative amount shifts left); float -> int casts saturate.
//
// Loops: serial loops are bottom-tested (extents are constant and positive); unrolled loops of
// up to kMaxUnroll iterations are emitted once per iteration; vectorized loops whose body is
// stores of element-wise expressions become vector code (lanes = the loop, or a power-of-two
// chunk of it), with contiguous accesses as vector loads/stores and others as gathers/scatters;
// any other vectorized loop gets LLVM's vectorize hint instead. Parallel and GPU-bound loops
// are the backend's (serial here).
#include "vacc/codegen/llvm/lowering.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>

#include "vacc/support/error.h"
#include "vacc/tir/arith.h"
#include "vacc/tir/equal.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/ops.h"

namespace vacc::codegen {

void optimize_module(llvm::Module &m, llvm::TargetMachine *tm, bool vectorize) {
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = vectorize;
  pto.SLPVectorization = vectorize;
  llvm::PassBuilder pb(tm, pto);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, mam);
}

// True when evaluating e may fault where its Select guard is false (a load or an integer
// division), so a Select around it must branch instead of evaluating both sides. A load the
// guard itself reads is evaluated anyway (Sigmoid's select(x >= 0, f(x), g(x))): it is safe.
bool may_fault(const Expr &e, const Expr &guard) {
  struct Faults : tir::Visitor {
    std::vector<const tir::Load *> guard_loads;
    bool collecting = true, found = false;
    bool read_by_guard(const tir::Load *l) const {
      for (const tir::Load *g : guard_loads) {
        if (g->buffer != l->buffer || g->indices.size() != l->indices.size()) continue;
        bool same = true;
        for (size_t k = 0; same && k < l->indices.size(); ++k)
          same = tir::structural_equal(g->indices[k], l->indices[k]);
        if (same) return true;
      }
      return false;
    }
    void visit_Load(const tir::Load *op) override {
      if (collecting) {
        guard_loads.push_back(op);
      } else if (read_by_guard(op)) {
        return;  // the guard evaluates it, indices and all
      } else {
        found = true;
      }
      Visitor::visit_Load(op);
    }
    // An integer division or remainder traps on a zero divisor or the lowest value over -1:
    // a constant divisor other than 0 and -1 never.
    static bool safe_divisor(const Expr &d) {
      const auto *c = d.as<tir::IntImm>();
      return c && c->value != 0 && c->value != -1;
    }
    void visit_Div(const tir::Div *op) override {
      if (!collecting && !op->dtype.is_float() && !safe_divisor(op->b)) found = true;
      Visitor::visit_Div(op);
    }
    void visit_Mod(const tir::Mod *op) override {
      if (!collecting && !safe_divisor(op->b)) found = true;
      Visitor::visit_Mod(op);
    }
  } v;
  if (guard.defined()) v.visit(guard);
  v.collecting = false;
  v.visit(e);
  return v.found;
}

// Coefficient of v in the row-major flat index of `indices` into b; false when not affine.
bool flat_coeff(const tir::Buffer &b, const std::vector<Expr> &indices, const tir::Var &v,
                int64_t *coeff) {
  std::vector<int64_t> strides = b->strides();
  *coeff = 0;
  for (size_t k = 0; k < indices.size(); ++k) {
    int64_t c;
    if (!tir::affine_coeff(indices[k], v, &c)) return false;
    *coeff += c * strides[k];
  }
  return true;
}

LlvmLowering::LlvmLowering(const tir::Func &f, llvm::LLVMContext &ctx, llvm::Module &m)
    : f_(f), ctx_(ctx), m_(m), b_(ctx) {
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  b_.setFastMathFlags(fmf);
}

// ------------------------------------------------------------------------------ types
llvm::Type *LlvmLowering::scalar_type(DataType t, bool in_memory) {
  if (t.is_bool()) return in_memory ? b_.getInt8Ty() : b_.getInt1Ty();
  if (t.is_float()) {
    if (t.bits == 32) return b_.getFloatTy();
    if (t.bits == 64) return b_.getDoubleTy();
    fail("{}: float{} is not supported (float32 and float64 are)", backend(), t.bits);
  }
  return b_.getIntNTy(t.bits);
}

llvm::Type *LlvmLowering::reg_type(DataType t, int lanes) {
  llvm::Type *s = scalar_type(t, false);
  return lanes > 1 ? llvm::FixedVectorType::get(s, lanes) : s;
}

llvm::Value *LlvmLowering::splat(llvm::Value *v) {
  if (!vvar_ || is_vec(v)) return v;
  return b_.CreateVectorSplat(lanes_, v);
}

void LlvmLowering::unify(llvm::Value *&a, llvm::Value *&b) {
  if (is_vec(a) != is_vec(b)) {
    a = splat(a);
    b = splat(b);
  }
}

// --------------------------------------------------------------------------- functions
// A function over `bufs` (noalias pointers) and `vars` (scalars); with `range`, two more
// i64 parameters (begin, end). Rebinds bufs_/vars_ to its parameters.
llvm::Function *LlvmLowering::make_function(const std::string &name,
                                            const std::vector<const tir::BufferNode *> &bufs,
                                            const std::vector<const tir::VarNode *> &vars,
                                            bool range) {
  std::vector<llvm::Type *> tys;
  for (auto *b : bufs) tys.push_back(mem_type(b->dtype)->getPointerTo());
  for (auto *v : vars) tys.push_back(scalar_type(v->dtype, false));
  if (range) {
    tys.push_back(b_.getInt64Ty());
    tys.push_back(b_.getInt64Ty());
  }
  auto *fty = llvm::FunctionType::get(b_.getVoidTy(), tys, false);
  auto *fn = llvm::Function::Create(fty, llvm::Function::InternalLinkage, name, m_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr("min-legal-vector-width", "512");
  bufs_.clear();
  vars_.clear();
  for (size_t i = 0; i < bufs.size(); ++i) {
    fn->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
    fn->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoCapture);
    bufs_[bufs[i]] = fn->getArg(static_cast<unsigned>(i));
  }
  for (size_t i = 0; i < vars.size(); ++i) {
    vars_[vars[i]] = fn->getArg(static_cast<unsigned>(bufs.size() + i));
  }
  return fn;
}

// Emits `body` as the code of fn (entry block, ret void), then restores the caller's state.
void LlvmLowering::emit_in(llvm::Function *fn, const std::function<void()> &body) {
  llvm::Function *saved_fn = fn_;
  llvm::BasicBlock *saved_alloca = alloca_block_;
  fn_ = fn;
  alloca_block_ = llvm::BasicBlock::Create(ctx_, "allocas", fn);
  llvm::BasicBlock *start = llvm::BasicBlock::Create(ctx_, "start", fn);
  b_.SetInsertPoint(start);
  body();
  b_.CreateRetVoid();
  b_.SetInsertPoint(alloca_block_);
  b_.CreateBr(start);
  fn_ = saved_fn;
  alloca_block_ = saved_alloca;
}

}  // namespace vacc::codegen
