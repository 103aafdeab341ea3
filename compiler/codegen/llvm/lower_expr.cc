// Lowering of expressions, loads and stores. In vector mode (inside a vectorized loop) a
// value is a vector when it depends on the loop variable; accesses contiguous in it are vector
// loads/stores, other varying ones gathers/scatters, invariant ones scalars (splat on use).
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

// ------------------------------------------------------------------------- expressions

llvm::Value *LlvmLowering::expr(const Expr &e) {
  switch (e.kind()) {
    case ExprKind::kIntImm: {
      const tir::IntImm *op = e.as<tir::IntImm>();
      return llvm::ConstantInt::get(reg_type(e.dtype(), 1), static_cast<uint64_t>(op->value),
                                    e.dtype().is_int());
    }
    case ExprKind::kFloatImm:
      return llvm::ConstantFP::get(reg_type(e.dtype(), 1), e.as<tir::FloatImm>()->value);
    case ExprKind::kVar:
      return var(e.as<tir::VarNode>());
#define VACC_X(name, ...) \
  case ExprKind::k##name: \
    return binary(e.kind(), e.as<tir::name>()->a, e.as<tir::name>()->b);
      VACC_TIR_BINARY_NODES(VACC_X)
#undef VACC_X
    case ExprKind::kNot:
      return b_.CreateNot(expr(e.as<tir::Not>()->a));
    case ExprKind::kCast:
      return cast(e.dtype(), e.as<tir::Cast>()->value);
    case ExprKind::kCall:
      return call(e.as<tir::Call>());
    case ExprKind::kSelect:
      return select(e.as<tir::Select>());
    case ExprKind::kLoad: {
      const tir::Load *op = e.as<tir::Load>();
      return load(op->buffer, op->indices);
    }
  }
  VACC_CHECK(false) << "unknown expression kind";
  return nullptr;
}

llvm::Value *LlvmLowering::var(const tir::VarNode *v) {
  auto it = vars_.find(v);
  if (it == vars_.end()) fail("{}: {}: unbound variable '{}'", backend(), f_.name, v->name);
  if (v != vvar_) return it->second;
  // The vectorized variable: base + <0, 1, ..., lanes-1>.
  std::vector<llvm::Constant *> steps;
  llvm::Type *t = it->second->getType();
  for (int i = 0; i < lanes_; ++i) steps.push_back(llvm::ConstantInt::get(t, i));
  return b_.CreateAdd(b_.CreateVectorSplat(lanes_, it->second), llvm::ConstantVector::get(steps));
}

llvm::Value *LlvmLowering::binary(ExprKind k, const Expr &ea, const Expr &eb) {
  DataType t = ea.dtype();
  if (k == ExprKind::kAnd || k == ExprKind::kOr) {
    llvm::Value *a = expr(ea), *b = expr(eb);
    unify(a, b);
    return k == ExprKind::kAnd ? b_.CreateAnd(a, b) : b_.CreateOr(a, b);
  }
  llvm::Value *a = expr(ea), *b = expr(eb);
  unify(a, b);
  bool fl = t.is_float(), un = t.is_uint() || t.is_bool();
  switch (k) {
    case ExprKind::kAdd:
      return fl ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
    case ExprKind::kSub:
      return fl ? b_.CreateFSub(a, b) : b_.CreateSub(a, b);
    case ExprKind::kMul:
      return fl ? b_.CreateFMul(a, b) : b_.CreateMul(a, b);
    case ExprKind::kDiv:
      if (fl) return b_.CreateFDiv(a, b);
      if (un) return b_.CreateUDiv(a, b);
      return floor_div(a, b, true);
    case ExprKind::kMod:
      if (un) return b_.CreateURem(a, b);
      return floor_div(a, b, false);
    case ExprKind::kMin:
    case ExprKind::kMax: {
      bool mn = k == ExprKind::kMin;
      llvm::Value *lt = fl   ? b_.CreateFCmpOLT(a, b)
                        : un ? b_.CreateICmpULT(a, b)
                             : b_.CreateICmpSLT(a, b);
      return mn ? b_.CreateSelect(lt, a, b) : b_.CreateSelect(lt, b, a);
    }
    case ExprKind::kShr:
      return shr(a, b, t);
    case ExprKind::kEQ:
      return fl ? b_.CreateFCmpOEQ(a, b) : b_.CreateICmpEQ(a, b);
    case ExprKind::kNE:
      return fl ? b_.CreateFCmpUNE(a, b) : b_.CreateICmpNE(a, b);
    case ExprKind::kLT:
      return fl ? b_.CreateFCmpOLT(a, b) : un ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b);
    case ExprKind::kLE:
      return fl ? b_.CreateFCmpOLE(a, b) : un ? b_.CreateICmpULE(a, b) : b_.CreateICmpSLE(a, b);
    case ExprKind::kGT:
      return fl ? b_.CreateFCmpOGT(a, b) : un ? b_.CreateICmpUGT(a, b) : b_.CreateICmpSGT(a, b);
    case ExprKind::kGE:
      return fl ? b_.CreateFCmpOGE(a, b) : un ? b_.CreateICmpUGE(a, b) : b_.CreateICmpSGE(a, b);
    default:
      break;
  }
  VACC_CHECK(false) << "unhandled binary node";
  return nullptr;
}

// Floor division / modulo of signed integers.
llvm::Value *LlvmLowering::floor_div(llvm::Value *a, llvm::Value *b, bool div) {
  llvm::Value *q = b_.CreateSDiv(a, b), *r = b_.CreateSRem(a, b);
  llvm::Value *zero = llvm::Constant::getNullValue(a->getType());
  llvm::Value *adjust =
      b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
  if (div) return b_.CreateSub(q, b_.CreateZExt(adjust, a->getType()));
  return b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
}

// The ISA's SHR: a >> min(b, bits-1) for b >= 0, a << min(-b, bits-1) otherwise.
llvm::Value *LlvmLowering::shr(llvm::Value *a, llvm::Value *b, DataType t) {
  llvm::Type *ty = a->getType();
  llvm::Value *maxs = llvm::ConstantInt::get(ty, t.bits - 1);
  auto clampv = [&](llvm::Value *x) {
    return b_.CreateSelect(t.is_int() ? b_.CreateICmpSGT(x, maxs) : b_.CreateICmpUGT(x, maxs), maxs,
                           x);
  };
  llvm::Value *right = t.is_int() ? b_.CreateAShr(a, clampv(b)) : b_.CreateLShr(a, clampv(b));
  if (!t.is_int()) return right;
  llvm::Value *zero = llvm::Constant::getNullValue(ty);
  llvm::Value *left = b_.CreateShl(a, clampv(b_.CreateNeg(b)));
  return b_.CreateSelect(b_.CreateICmpSGE(b, zero), right, left);
}

llvm::Value *LlvmLowering::cast(DataType to, const Expr &from_e) {
  DataType from = from_e.dtype();
  llvm::Value *v = expr(from_e);
  int lanes = is_vec(v) ? lanes_ : 1;
  llvm::Type *ty = reg_type(to, lanes);
  if (to == from) return v;
  if (to.is_bool()) {
    llvm::Value *zero = llvm::Constant::getNullValue(v->getType());
    return from.is_float() ? b_.CreateFCmpUNE(v, zero) : b_.CreateICmpNE(v, zero);
  }
  bool from_signed = from.is_int();
  if (to.is_float()) {
    if (from.is_float()) return b_.CreateFPCast(v, ty);
    return from_signed ? b_.CreateSIToFP(v, ty) : b_.CreateUIToFP(v, ty);
  }
  if (from.is_float()) {
    // Saturating conversion: defined for every input (NaN -> 0).
    auto id = to.is_int() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {ty, v->getType()}, {v});
  }
  return b_.CreateIntCast(v, ty, from_signed);
}

llvm::Intrinsic::ID LlvmLowering::call_intrinsic(tir::CallOp op) {
  switch (op) {
    case tir::CallOp::kExp:
      return llvm::Intrinsic::exp;
    case tir::CallOp::kLog:
      return llvm::Intrinsic::log;
    case tir::CallOp::kSqrt:
      return llvm::Intrinsic::sqrt;
    case tir::CallOp::kFloor:
      return llvm::Intrinsic::floor;
    case tir::CallOp::kCeil:
      return llvm::Intrinsic::ceil;
    case tir::CallOp::kRound:
      return llvm::Intrinsic::roundeven;
    case tir::CallOp::kAbs:
      return llvm::Intrinsic::fabs;
    case tir::CallOp::kTanh:
      break;
  }
  return llvm::Intrinsic::not_intrinsic;
}

llvm::Value *LlvmLowering::call(const tir::Call *op) {
  llvm::Value *a = expr(op->args[0]);
  llvm::Intrinsic::ID id = call_intrinsic(op->op);
  if (id == llvm::Intrinsic::not_intrinsic) {
    fail("{}: {}: no lowering for {}", backend(), f_.name, tir::call_op_name(op->op));
  }
  return b_.CreateIntrinsic(id, {a->getType()}, {a});
}

llvm::Value *LlvmLowering::select(const tir::Select *op) {
  llvm::Value *c = expr(op->cond);
  if (!may_fault(op->t, op->cond) && !may_fault(op->f, op->cond)) {
    llvm::Value *t = expr(op->t), *f = expr(op->f);
    unify(t, f);
    if (is_vec(c)) {
      t = splat(t);
      f = splat(f);
    }
    return b_.CreateSelect(c, t, f);
  }
  VACC_CHECK(!vvar_) << "a guarded load in a vector body (can_vectorize should refuse it)";
  llvm::BasicBlock *tb = llvm::BasicBlock::Create(ctx_, "sel.t", fn_);
  llvm::BasicBlock *fb = llvm::BasicBlock::Create(ctx_, "sel.f", fn_);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx_, "sel.end", fn_);
  b_.CreateCondBr(c, tb, fb);
  b_.SetInsertPoint(tb);
  llvm::Value *t = expr(op->t);
  llvm::BasicBlock *tend = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(fb);
  llvm::Value *f = expr(op->f);
  llvm::BasicBlock *fend = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  llvm::PHINode *phi = b_.CreatePHI(t->getType(), 2);
  phi->addIncoming(t, tend);
  phi->addIncoming(f, fend);
  return phi;
}

// ------------------------------------------------------------------------------ memory

llvm::Value *LlvmLowering::buffer_ptr(const tir::Buffer &b) {
  auto it = bufs_.find(b.get());
  if (it == bufs_.end()) fail("{}: {}: buffer '{}' is not in scope", backend(), f_.name, b->name);
  return it->second;
}

// The flat row-major index as i64 (scalar or vector, following the current mode).
llvm::Value *LlvmLowering::flat_index(const tir::Buffer &b, const std::vector<Expr> &indices) {
  std::vector<int64_t> strides = b->strides();
  llvm::Value *acc = nullptr;
  for (size_t k = 0; k < indices.size(); ++k) {
    llvm::Value *i = expr(indices[k]);
    llvm::Type *i64 =
        is_vec(i) ? static_cast<llvm::Type *>(llvm::FixedVectorType::get(b_.getInt64Ty(), lanes_))
                  : b_.getInt64Ty();
    i = b_.CreateSExt(i, i64);
    if (strides[k] != 1) i = b_.CreateMul(i, llvm::ConstantInt::get(i64, strides[k]), "", true);
    if (!acc) {
      acc = i;
    } else {
      unify(acc, i);
      acc = b_.CreateAdd(acc, i, "", false, true);
    }
  }
  return acc ? acc : b_.getInt64(0);
}

LlvmLowering::Access LlvmLowering::access_kind(const tir::Buffer &b,
                                               const std::vector<Expr> &indices) {
  if (!vvar_) return Access::kScalar;
  bool uses = false;
  for (const Expr &i : indices) uses |= tir::uses_var(i, vvar_ref_);
  if (!uses) return Access::kScalar;
  int64_t c;
  if (flat_coeff(b, indices, vvar_ref_, &c) && c == 1) return Access::kContiguous;
  return Access::kGather;
}

llvm::Value *LlvmLowering::from_memory(llvm::Value *v, DataType t) {
  if (!t.is_bool()) return v;
  return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
}

llvm::Value *LlvmLowering::to_memory(llvm::Value *v, DataType t) {
  if (!t.is_bool()) return v;
  llvm::Type *i8 = b_.getInt8Ty();
  return b_.CreateZExt(v, is_vec(v) ? llvm::FixedVectorType::get(i8, lanes_) : i8);
}

llvm::Value *LlvmLowering::load(const tir::Buffer &b, const std::vector<Expr> &indices) {
  llvm::Type *et = mem_type(b->dtype);
  llvm::Value *base = buffer_ptr(b);
  llvm::Align align(m_.getDataLayout().getABITypeAlign(et));
  switch (access_kind(b, indices)) {
    case Access::kScalar: {
      llvm::Value *ptr =
          at_lane0([&] { return b_.CreateInBoundsGEP(et, base, flat_index(b, indices)); });
      return from_memory(b_.CreateAlignedLoad(et, ptr, align), b->dtype);
    }
    case Access::kContiguous: {
      llvm::Value *ptr =
          at_lane0([&] { return b_.CreateInBoundsGEP(et, base, flat_index(b, indices)); });
      auto *vt = llvm::FixedVectorType::get(et, lanes_);
      ptr = b_.CreateBitCast(ptr, vt->getPointerTo());
      return from_memory(b_.CreateAlignedLoad(vt, ptr, align), b->dtype);
    }
    case Access::kGather: {
      llvm::Value *idx = splat(flat_index(b, indices));
      llvm::Value *ptrs = b_.CreateInBoundsGEP(et, base, idx);
      auto *vt = llvm::FixedVectorType::get(et, lanes_);
      return from_memory(b_.CreateMaskedGather(vt, ptrs, align), b->dtype);
    }
  }
  return nullptr;
}

void LlvmLowering::store(const tir::Store *op) {
  const tir::Buffer &b = op->buffer;
  llvm::Type *et = mem_type(b->dtype);
  llvm::Value *base = buffer_ptr(b);
  llvm::Align align(m_.getDataLayout().getABITypeAlign(et));
  llvm::Value *v = expr(op->value);
  switch (access_kind(b, op->indices)) {
    case Access::kScalar: {
      VACC_CHECK(!is_vec(v)) << "vector value stored to one element";
      llvm::Value *ptr =
          at_lane0([&] { return b_.CreateInBoundsGEP(et, base, flat_index(b, op->indices)); });
      b_.CreateAlignedStore(to_memory(v, b->dtype), ptr, align);
      return;
    }
    case Access::kContiguous: {
      llvm::Value *ptr =
          at_lane0([&] { return b_.CreateInBoundsGEP(et, base, flat_index(b, op->indices)); });
      auto *vt = llvm::FixedVectorType::get(et, lanes_);
      ptr = b_.CreateBitCast(ptr, vt->getPointerTo());
      b_.CreateAlignedStore(to_memory(splat(v), b->dtype), ptr, align);
      return;
    }
    case Access::kGather: {
      llvm::Value *ptrs = b_.CreateInBoundsGEP(et, base, splat(flat_index(b, op->indices)));
      b_.CreateMaskedScatter(to_memory(splat(v), b->dtype), ptrs, align);
      return;
    }
  }
}

}  // namespace vacc::codegen
