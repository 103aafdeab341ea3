// Lowering of statements and loops: serial loops, unrolled loops, vectorized loops (explicit
// vector code when the body allows it, LLVM's vectorize hint otherwise) and parallel loops
// (outlined bodies run by the thread pool).
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "vacc/codegen/llvm/lowering.h"
#include "vacc/support/error.h"
#include "vacc/tir/arith.h"
#include "vacc/tir/equal.h"
#include "vacc/tir/functor.h"
#include "vacc/tir/ops.h"

namespace vacc::codegen {

// --------------------------------------------------------------------------- statements

void LlvmLowering::stmt(const Stmt &s) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::kStore:
      return store(s.as<tir::Store>());
    case StmtKind::kPrefetch:
      return prefetch(s.as<tir::Prefetch>());
    case StmtKind::kFor:
      return loop(s.as<tir::For>());
    case StmtKind::kIfThenElse:
      return if_then_else(s.as<tir::IfThenElse>());
    case StmtKind::kSeq:
      for (const Stmt &x : s.as<tir::Seq>()->stmts) stmt(x);
      return;
    case StmtKind::kAllocate:
      return allocate(s.as<tir::Allocate>());
    case StmtKind::kAttr:
      return attr(s.as<tir::Attr>());
    case StmtKind::kDma:
    case StmtKind::kGemm:
    case StmtKind::kAlu:
    case StmtKind::kDepPush:
    case StmtKind::kDepPop:
      fail(
          "{}: {}: {} is an accelerator statement; lower the function without "
          "accelerator scopes and intrinsics to run it here",
          backend(), f_.name, tir::stmt_kind_name(s.kind()));
  }
}

void LlvmLowering::attr(const tir::Attr *op) {
  stmt(op->body);
}

void LlvmLowering::prefetch(const tir::Prefetch *op) {
  const tir::Buffer &b = op->buffer;
  llvm::Value *ptr = at_lane0(
      [&] { return b_.CreateGEP(mem_type(b->dtype), buffer_ptr(b), flat_index(b, op->indices)); });
  ptr = b_.CreateBitCast(ptr, b_.getInt8PtrTy());
  // read (0), keep in all levels (3), data cache (1)
  b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {ptr->getType()},
                     {ptr, b_.getInt32(0), b_.getInt32(3), b_.getInt32(1)});
}

void LlvmLowering::if_then_else(const tir::IfThenElse *op) {
  llvm::Value *c = expr(op->cond);
  llvm::BasicBlock *tb = llvm::BasicBlock::Create(ctx_, "then", fn_);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx_, "endif", fn_);
  llvm::BasicBlock *eb =
      op->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "else", fn_) : done;
  b_.CreateCondBr(c, tb, eb);
  b_.SetInsertPoint(tb);
  stmt(op->then_case);
  b_.CreateBr(done);
  if (op->else_case.defined()) {
    b_.SetInsertPoint(eb);
    stmt(op->else_case);
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
}

llvm::Value *LlvmLowering::stack_buffer(const tir::Buffer &buf) {
  llvm::IRBuilder<> ab(alloca_block_);
  auto *a = ab.CreateAlloca(mem_type(buf->dtype), ab.getInt64(buf->elems()), buf->name);
  a->setAlignment(llvm::Align(64));
  return a;
}

void LlvmLowering::allocate(const tir::Allocate *op) {
  bufs_[op->buffer.get()] = stack_buffer(op->buffer);
  stmt(op->body);
  bufs_.erase(op->buffer.get());
}

llvm::MDNode *LlvmLowering::loop_hint(const char *key) {
  llvm::Metadata *hint[] = {llvm::MDString::get(ctx_, key),
                            llvm::ConstantAsMetadata::get(b_.getTrue())};
  llvm::Metadata *ops[] = {nullptr, llvm::MDNode::get(ctx_, hint)};
  llvm::MDNode *md = llvm::MDNode::getDistinct(ctx_, ops);
  md->replaceOperandWith(0, md);
  return md;
}

// for (iv = begin; iv < end; ++iv) body(iv), with begin < end; iv in i64.
void LlvmLowering::counted_loop(llvm::Value *begin, llvm::Value *end, llvm::MDNode *md,
                                const std::function<void(llvm::Value *)> &body) {
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  llvm::BasicBlock *bb = llvm::BasicBlock::Create(ctx_, "loop", fn_);
  llvm::BasicBlock *exit = llvm::BasicBlock::Create(ctx_, "loop.end", fn_);
  b_.CreateBr(bb);
  b_.SetInsertPoint(bb);
  llvm::PHINode *iv = b_.CreatePHI(b_.getInt64Ty(), 2);
  iv->addIncoming(begin, pre);
  body(iv);
  llvm::Value *next = b_.CreateAdd(iv, b_.getInt64(1), "", true, true);
  llvm::BasicBlock *latch = b_.GetInsertBlock();
  iv->addIncoming(next, latch);
  llvm::BranchInst *br = b_.CreateCondBr(b_.CreateICmpSLT(next, end), bb, exit);
  if (md) br->setMetadata(llvm::LLVMContext::MD_loop, md);
  b_.SetInsertPoint(exit);
}

void LlvmLowering::bind(const tir::Var &v, llvm::Value *i64) {
  vars_[v.get()] = b_.CreateIntCast(i64, scalar_type(v->dtype, false), true);
}

void LlvmLowering::serial(const tir::For *op, llvm::MDNode *md) {
  counted_loop(b_.getInt64(0), b_.getInt64(op->extent), md, [&](llvm::Value *iv) {
    bind(op->var, iv);
    stmt(op->body);
  });
  vars_.erase(op->var.get());
}

void LlvmLowering::loop(const tir::For *op) {
  if (vvar_) fail("{}: {}: a loop inside vectorized loop", backend(), f_.name);
  switch (op->for_kind) {
    case tir::ForKind::kUnrolled:
      if (op->extent <= kMaxUnroll) {
        for (int64_t i = 0; i < op->extent; ++i) {
          vars_[op->var.get()] = llvm::ConstantInt::get(scalar_type(op->var->dtype, false), i);
          stmt(op->body);
        }
        vars_.erase(op->var.get());
        return;
      }
      return serial(op, loop_hint("llvm.loop.unroll.enable"));
    case tir::ForKind::kVectorized: {
      int lanes = vector_lanes(op);
      if (lanes > 1) return vectorized(op, lanes);
      return serial(op, loop_hint("llvm.loop.vectorize.enable"));
    }
    case tir::ForKind::kParallel:
      if (op->extent > 1) return parallel(op);
      return serial(op, nullptr);
    default:
      return serial(op, nullptr);
  }
}

// Lanes for explicit vector code, or 0 when the body does not allow it: only stores whose
// index moves with the loop variable, and no buffer both stored and read at another index.
int LlvmLowering::vector_lanes(const tir::For *op) {
  int64_t lanes = op->extent;
  if (lanes > kMaxLanes) {
    lanes = kMaxLanes;
    while (lanes > 1 && op->extent % lanes != 0) lanes /= 2;
    if (lanes < 4) return 0;
  }
  std::vector<const tir::Store *> stores;
  bool ok = true;
  std::function<void(const Stmt &)> collect = [&](const Stmt &s) {
    if (const tir::Seq *q = s.as<tir::Seq>()) {
      for (const Stmt &x : q->stmts) collect(x);
    } else if (const tir::Attr *a = s.as<tir::Attr>()) {
      collect(a->body);
    } else if (const tir::Store *st = s.as<tir::Store>()) {
      stores.push_back(st);
    } else {
      ok = false;
    }
  };
  collect(op->body);
  if (!ok || stores.empty()) return 0;
  for (const tir::Store *st : stores) {
    int64_t c;
    if (!flat_coeff(st->buffer, st->indices, op->var, &c) || c == 0) return 0;
    bool bad = false;
    struct V : tir::Visitor {
      std::function<void(const tir::Load *)> on_load;
      std::function<void(const tir::Select *)> on_select;
      void visit_Load(const tir::Load *l) override {
        on_load(l);
        Visitor::visit_Load(l);
      }
      void visit_Select(const tir::Select *s) override {
        on_select(s);
        Visitor::visit_Select(s);
      }
    } v;
    v.on_select = [&](const tir::Select *s) {
      bad |= may_fault(s->t, s->cond) || may_fault(s->f, s->cond);
    };
    v.on_load = [&](const tir::Load *l) {
      for (const tir::Store *other : stores) {
        if (other->buffer != l->buffer) continue;
        bool same = l->indices.size() == other->indices.size();
        for (size_t k = 0; same && k < l->indices.size(); ++k) {
          same = tir::structural_equal(l->indices[k], other->indices[k]);
        }
        bad |= !same;
      }
    };
    v.visit(st->value);
    for (const Expr &i : st->indices) v.visit(i);
    if (bad) return 0;
  }
  return static_cast<int>(lanes);
}

// A vectorized loop: chunks of `lanes` (a power of two) in a loop, or, when the loop is one
// chunk of any length, pieces of descending powers of two (56 = 32 + 16 + 8): the backend
// handles only power-of-two vectors well, and constant offsets keep accumulator tiles in
// registers.
void LlvmLowering::vectorized(const tir::For *op, int lanes) {
  auto piece = [&](llvm::Value *base, int n) {
    bind(op->var, base);
    if (n > 1) {
      vvar_ = op->var.get();
      vvar_ref_ = op->var;
      lanes_ = n;
    }
    stmt(op->body);
    vvar_ = nullptr;
    vvar_ref_ = nullptr;
    lanes_ = 0;
  };
  if (op->extent == lanes) {
    int64_t offset = 0;
    for (int p = 64; p >= 1; p /= 2) {
      while (op->extent - offset >= p) {
        piece(b_.getInt64(offset), p);
        offset += p;
      }
    }
  } else {
    counted_loop(b_.getInt64(0), b_.getInt64(op->extent / lanes), nullptr, [&](llvm::Value *chunk) {
      piece(b_.CreateMul(chunk, b_.getInt64(lanes)), lanes);
    });
  }
  vars_.erase(op->var.get());
}

void LlvmLowering::parallel(const tir::For *op) {
  serial(op, nullptr);
}

}  // namespace vacc::codegen
