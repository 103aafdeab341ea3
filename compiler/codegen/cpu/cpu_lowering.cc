// The CPU backend's part of lowering loop IR to LLVM IR (lower_llvm.h): the kernel's entry
// point, parallel loops outlined for the thread pool, exp inline (exp_f32.h) and tanh through
// libm, and buffers too large for the stack on the heap. Everything else is the shared
// LlvmLowering (codegen/llvm).
#include <llvm/IR/Constants.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "exp_f32.h"
#include "lower_llvm.h"
#include "vacc/codegen/llvm/lowering.h"
#include "vacc/support/error.h"

namespace vacc::codegen::cpu {
namespace {

class CpuLowering : public LlvmLowering {
 public:
  using LlvmLowering::LlvmLowering;

  // The entry point `void symbol(i8** args)` calls the body, whose buffers are noalias.
  void run(const std::string &symbol) {
    // The body: one noalias pointer per parameter.
    std::vector<const tir::BufferNode *> bufs;
    for (const tir::Buffer &p : f_.params) bufs.push_back(p.get());
    llvm::Function *body = make_function(symbol + "_body", bufs, {}, false);
    emit_in(body, [&] { stmt(f_.body); });

    // The entry point: void symbol(i8** args).
    llvm::Type *i8pp = b_.getInt8PtrTy()->getPointerTo();
    auto *fty = llvm::FunctionType::get(b_.getVoidTy(), {i8pp}, false);
    auto *entry = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, symbol, m_);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", entry));
    std::vector<llvm::Value *> args;
    for (size_t i = 0; i < f_.params.size(); ++i) {
      llvm::Value *slot = b_.CreateConstGEP1_64(b_.getInt8PtrTy(), entry->getArg(0), i);
      llvm::Value *p = b_.CreateLoad(b_.getInt8PtrTy(), slot);
      args.push_back(b_.CreateBitCast(p, mem_type(f_.params[i]->dtype)->getPointerTo()));
    }
    b_.CreateCall(body, args);
    b_.CreateRetVoid();
  }

 protected:
  const char *backend() const override { return "CPU backend"; }

  // exp of floats inline (exp_f32.h); tanh has no intrinsic: libm's, per lane.
  llvm::Value *call(const tir::Call *op) override {
    if (op->op == tir::CallOp::kExp && op->dtype.is_float() && op->dtype.bits == 32)
      return emit_exp_f32(b_, expr(op->args[0]));
    if (op->op != tir::CallOp::kTanh) return LlvmLowering::call(op);
    llvm::Value *a = expr(op->args[0]);
    llvm::Type *ty = a->getType();
    llvm::Type *st = ty->getScalarType();
    const char *fname = st->isFloatTy() ? "tanhf" : "tanh";
    llvm::FunctionCallee fn = m_.getOrInsertFunction(fname, st, st);
    if (!is_vec(a)) return b_.CreateCall(fn, {a});
    llvm::Value *r = llvm::UndefValue::get(ty);
    for (int i = 0; i < lanes_; ++i) {
      r = b_.CreateInsertElement(r, b_.CreateCall(fn, {b_.CreateExtractElement(a, i)}), i);
    }
    return r;
  }

  // Up to kMaxStackBytes on the stack, larger buffers on the heap.
  void allocate(const tir::Allocate *op) override {
    const tir::Buffer &buf = op->buffer;
    llvm::Type *et = mem_type(buf->dtype);
    int64_t bytes = buf->elems() * static_cast<int64_t>(m_.getDataLayout().getTypeAllocSize(et));
    if (bytes <= kMaxStackBytes) return LlvmLowering::allocate(op);
    llvm::FunctionCallee mal = m_.getOrInsertFunction("malloc", b_.getInt8PtrTy(), b_.getInt64Ty());
    llvm::Value *heap = b_.CreateCall(mal, {b_.getInt64(bytes)});
    bufs_[buf.get()] = b_.CreateBitCast(heap, et->getPointerTo());
    stmt(op->body);
    bufs_.erase(buf.get());
    llvm::FunctionCallee fr = m_.getOrInsertFunction("free", b_.getVoidTy(), b_.getInt8PtrTy());
    b_.CreateCall(fr, {heap});
  }

  // Outlines the loop body into fn(closure, begin, end) and calls the thread pool with it.
  void parallel(const tir::For *op) override {
    std::vector<const tir::BufferNode *> bufs;
    std::vector<llvm::Value *> buf_vals;
    for (auto &[b, v] : bufs_) {
      bufs.push_back(b);
      buf_vals.push_back(v);
    }
    std::vector<const tir::VarNode *> vars;
    std::vector<llvm::Value *> var_vals;
    for (auto &[x, v] : vars_) {
      vars.push_back(x);
      var_vals.push_back(v);
    }
    // The closure: one i64 per buffer pointer and variable.
    size_t n = bufs.size() + vars.size();
    llvm::Value *closure;
    {
      llvm::IRBuilder<> ab(alloca_block_);
      closure = ab.CreateAlloca(b_.getInt64Ty(), ab.getInt64(std::max<size_t>(n, 1)));
    }
    for (size_t i = 0; i < n; ++i) {
      llvm::Value *v = i < bufs.size() ? b_.CreatePtrToInt(buf_vals[i], b_.getInt64Ty())
                                       : b_.CreateSExt(var_vals[i - bufs.size()], b_.getInt64Ty());
      b_.CreateStore(v, b_.CreateConstGEP1_64(b_.getInt64Ty(), closure, i));
    }

    auto saved_bufs = bufs_;
    auto saved_vars = vars_;
    llvm::BasicBlock *saved_block = b_.GetInsertBlock();
    std::string name = fn_->getName().str() + ".par" + std::to_string(parallel_count_++);

    // The body over [begin, end), with noalias buffers.
    llvm::Function *inner = make_function(name + ".body", bufs, vars, true);
    llvm::Value *begin = inner->getArg(static_cast<unsigned>(n));
    llvm::Value *end = inner->getArg(static_cast<unsigned>(n + 1));
    emit_in(inner, [&] {
      counted_loop(begin, end, nullptr, [&](llvm::Value *iv) {
        bind(op->var, iv);
        stmt(op->body);
      });
    });

    // The trampoline the pool calls: unpacks the closure.
    llvm::Type *i8p = b_.getInt8PtrTy();
    auto *tty =
        llvm::FunctionType::get(b_.getVoidTy(), {i8p, b_.getInt64Ty(), b_.getInt64Ty()}, false);
    auto *tramp = llvm::Function::Create(tty, llvm::Function::InternalLinkage, name, m_);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", tramp));
    llvm::Value *slots = b_.CreateBitCast(tramp->getArg(0), b_.getInt64Ty()->getPointerTo());
    std::vector<llvm::Value *> args;
    for (size_t i = 0; i < n; ++i) {
      llvm::Value *v =
          b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstGEP1_64(b_.getInt64Ty(), slots, i));
      llvm::Type *t = inner->getArg(static_cast<unsigned>(i))->getType();
      args.push_back(i < bufs.size() ? b_.CreateIntToPtr(v, t) : b_.CreateTrunc(v, t));
    }
    args.push_back(tramp->getArg(1));
    args.push_back(tramp->getArg(2));
    b_.CreateCall(inner, args);
    b_.CreateRetVoid();

    bufs_ = saved_bufs;
    vars_ = saved_vars;
    b_.SetInsertPoint(saved_block);
    llvm::FunctionCallee pf = m_.getOrInsertFunction("vacc_cpu_parallel_for", b_.getVoidTy(),
                                                     tramp->getType(), i8p, b_.getInt64Ty());
    b_.CreateCall(pf, {tramp, b_.CreateBitCast(closure, i8p), b_.getInt64(op->extent)});
  }
};

}  // namespace

std::unique_ptr<llvm::Module> lower_to_llvm(const tir::Func &f, llvm::LLVMContext &ctx,
                                            const std::string &symbol) {
  auto m = std::make_unique<llvm::Module>(symbol, ctx);
  CpuLowering(f, ctx, *m).run(symbol);
  std::string err;
  llvm::raw_string_ostream os(err);
  VACC_CHECK(!llvm::verifyModule(*m, &os)) << "invalid LLVM IR for " << f.name << ": " << os.str();
  return m;
}

}  // namespace vacc::codegen::cpu
