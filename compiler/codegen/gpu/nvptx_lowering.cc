// NvptxLowering: one planned kernel (plan_kernels) as an NVPTX kernel function, through the
// shared loop IR -> LLVM IR lowering. blockIdx and threadIdx loops read the special registers
// (a thread loop shorter than the block is guarded), shared buffers are addrspace(3) globals,
// barriers bar.sync 0, exp/log/tanh the GPU's ex2/lg2 approximations (the CUDA math library is
// not part of Debian), vectorized and parallel loops serial (the threads are the parallelism).
#include "nvptx_lowering.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "passes.h"
#include "vacc/codegen/gpu/ptx.h"
#include "vacc/codegen/llvm/lowering.h"
#include "vacc/support/error.h"

namespace vacc::codegen::gpu {
namespace {

constexpr unsigned kSharedAddrSpace = 3;

class NvptxLowering : public LlvmLowering {
 public:
  NvptxLowering(const Kernel &k, llvm::LLVMContext &ctx, llvm::Module &m)
      : LlvmLowering(k.func, ctx, m), kernel_(k) {}

  void run() {
    std::vector<const tir::BufferNode *> bufs;
    for (const tir::Buffer &p : f_.params) bufs.push_back(p.get());
    llvm::Function *fn = make_function(kernel_.name, bufs, {}, false);
    fn->setLinkage(llvm::Function::ExternalLinkage);
    emit_in(fn, [&] { stmt(f_.body); });
    // The kernel marker and its block size, for ptxas (.maxntid).
    llvm::NamedMDNode *md = m_.getOrInsertNamedMetadata("nvvm.annotations");
    auto annotate = [&](const char *key, int64_t v) {
      llvm::Metadata *ops[] = {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx_, key),
                               llvm::ValueAsMetadata::get(b_.getInt32(static_cast<uint32_t>(v)))};
      md->addOperand(llvm::MDNode::get(ctx_, ops));
    };
    annotate("kernel", 1);
    annotate("maxntidx", kernel_.block[0]);
    annotate("maxntidy", kernel_.block[1]);
    annotate("maxntidz", kernel_.block[2]);
  }

 protected:
  const char *backend() const override { return "GPU backend"; }

  void loop(const tir::For *op) override {
    if (tir::is_gpu_block(op->for_kind)) {
      static const llvm::Intrinsic::ID ctaid[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
      bind(op->var, b_.CreateZExt(b_.CreateIntrinsic(ctaid[tir::gpu_axis(op->for_kind)], {}, {}),
                                  b_.getInt64Ty()));
      stmt(op->body);
      vars_.erase(op->var.get());
      return;
    }
    if (tir::is_gpu_thread(op->for_kind)) {
      static const llvm::Intrinsic::ID tid[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                                llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                                llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z};
      int axis = tir::gpu_axis(op->for_kind);
      llvm::Value *t = b_.CreateZExt(b_.CreateIntrinsic(tid[axis], {}, {}), b_.getInt64Ty());
      bind(op->var, t);
      if (op->extent < kernel_.block[axis]) {
        // Threads past this loop's extent skip it (they meet the others at the next barrier).
        llvm::BasicBlock *then = llvm::BasicBlock::Create(ctx_, "thread.on", fn_);
        llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx_, "thread.off", fn_);
        b_.CreateCondBr(b_.CreateICmpULT(t, b_.getInt64(op->extent)), then, done);
        b_.SetInsertPoint(then);
        stmt(op->body);
        b_.CreateBr(done);
        b_.SetInsertPoint(done);
      } else {
        stmt(op->body);
      }
      vars_.erase(op->var.get());
      return;
    }
    if (op->for_kind == tir::ForKind::kVectorized) {
      return serial(op, loop_hint("llvm.loop.unroll.enable"));
    }
    LlvmLowering::loop(op);  // parallel: serial (LlvmLowering::parallel)
  }

  void allocate(const tir::Allocate *op) override {
    const tir::Buffer &buf = op->buffer;
    llvm::Type *et = mem_type(buf->dtype);
    int64_t bytes = buf->elems() * static_cast<int64_t>(m_.getDataLayout().getTypeAllocSize(et));
    if (buf->scope == tir::Scope::kShared) {
      auto *ty = llvm::ArrayType::get(et, static_cast<uint64_t>(buf->elems()));
      auto *g = new llvm::GlobalVariable(m_, ty, false, llvm::GlobalValue::InternalLinkage,
                                         llvm::UndefValue::get(ty), buf->name, nullptr,
                                         llvm::GlobalValue::NotThreadLocal, kSharedAddrSpace);
      g->setAlignment(llvm::Align(16));
      llvm::Value *first = b_.CreateConstInBoundsGEP2_64(ty, g, 0, 0);
      bufs_[buf.get()] = b_.CreateAddrSpaceCast(first, et->getPointerTo());
      stmt(op->body);
      bufs_.erase(buf.get());
      return;
    }
    if (bytes > kMaxLocalBytes) {
      fail(
          "GPU backend: {}: local buffer '{}' takes {} bytes per thread; at most {} fit: "
          "schedule a smaller tile per thread",
          f_.name, buf->name, bytes, kMaxLocalBytes);
    }
    LlvmLowering::allocate(op);
  }

  void prefetch(const tir::Prefetch *) override {}  // NVPTX selects no llvm.prefetch

  void attr(const tir::Attr *op) override {
    if (op->key == kBarrierKey && op->value == kBarrierValue) {
      b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
      return;
    }
    LlvmLowering::attr(op);
  }

  // exp, log and tanh of float32 from the hardware's 2^x and log2 x; other ops are intrinsics
  // NVPTX selects (sqrt.rn, cvt.rmi, ...).
  llvm::Value *call(const tir::Call *op) override {
    bool transcendental =
        op->op == tir::CallOp::kExp || op->op == tir::CallOp::kLog || op->op == tir::CallOp::kTanh;
    if (!transcendental) return LlvmLowering::call(op);
    if (op->dtype != tir::float32()) {
      fail("GPU backend: {}: {} of {} has no GPU lowering (float32 only)", f_.name,
           tir::call_op_name(op->op), op->dtype.str());
    }
    llvm::Value *x = expr(op->args[0]);
    auto k = [&](double v) { return llvm::ConstantFP::get(b_.getFloatTy(), v); };
    auto exp = [&](llvm::Value *v) {
      return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {},
                                {b_.CreateFMul(v, k(1.4426950408889634))});
    };
    switch (op->op) {
      case tir::CallOp::kExp:
        return exp(x);
      case tir::CallOp::kLog:
        return b_.CreateFMul(b_.CreateIntrinsic(llvm::Intrinsic::nvvm_lg2_approx_f, {}, {x}),
                             k(0.6931471805599453));
      default: {
        // tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|): no overflow for any x.
        llvm::Value *ax = b_.CreateIntrinsic(llvm::Intrinsic::fabs, {x->getType()}, {x});
        llvm::Value *e = exp(b_.CreateFMul(ax, k(-2.0)));
        llvm::Value *t = b_.CreateFDiv(b_.CreateFSub(k(1.0), e), b_.CreateFAdd(k(1.0), e));
        return b_.CreateIntrinsic(llvm::Intrinsic::copysign, {x->getType()}, {t, x});
      }
    }
  }

 private:
  const Kernel &kernel_;
};

}  // namespace

void lower_kernel(const Kernel &k, llvm::LLVMContext &ctx, llvm::Module &m) {
  NvptxLowering(k, ctx, m).run();
  std::string err;
  llvm::raw_string_ostream os(err);
  VACC_CHECK(!llvm::verifyModule(m, &os)) << "invalid NVPTX IR for " << k.name << ": " << os.str();
}

}  // namespace vacc::codegen::gpu
