#include "exp_f32.h"

#include <llvm/IR/Intrinsics.h>

namespace vacc::codegen::cpu {

llvm::Value *emit_exp_f32(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Type *ft = x->getType();
  llvm::Type *it = ft->getWithNewType(b.getInt32Ty());
  auto f = [&](double v) { return llvm::ConstantFP::get(ft, v); };
  auto i = [&](int64_t v) { return llvm::ConstantInt::get(it, v); };

  // Beyond [-104, 89] exp is 0 (below the smallest subnormal's half) or +inf in float; the
  // clamp keeps n, the power of two, within what two scale factors below can carry. NaN is
  // set aside (its conversion to an integer would be poison) and given back at the end.
  llvm::Value *nan = b.CreateFCmpUNO(x, x);
  llvm::Value *v = b.CreateSelect(nan, f(0), x);
  v = b.CreateSelect(b.CreateFCmpOGT(v, f(89)), f(89), v);
  v = b.CreateSelect(b.CreateFCmpOLT(v, f(-104)), f(-104), v);

  // x = n ln2 + r, |r| <= ln2 / 2: ln2 in two parts, the first exact in float for n's range
  // (its 9 significant bits times n's 8), so that r loses nothing to the subtraction.
  llvm::Value *n =
      b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, b.CreateFMul(v, f(1.4426950408889634)));
  llvm::Value *r = b.CreateFSub(v, b.CreateFMul(n, f(0.693359375)));
  r = b.CreateFSub(r, b.CreateFMul(n, f(-2.12194440054690583e-4)));

  // exp(r) by its Taylor series to r^7 (the next term, |r|^8 / 8!, is under 6e-9 of it).
  llvm::Value *p = f(1.0 / 5040);
  for (double c : {1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0})
    p = b.CreateFAdd(b.CreateFMul(p, r), f(c));

  // Times 2^n as two factors 2^(n/2) and 2^(n - n/2), each a normal float for n in
  // [-150, 129], so that subnormal results and the overflow to +inf come out of the product.
  llvm::Value *ni = b.CreateFPToSI(n, it);
  llvm::Value *n1 = b.CreateAShr(ni, i(1));
  llvm::Value *n2 = b.CreateSub(ni, n1);
  auto pow2 = [&](llvm::Value *e) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, i(127)), i(23)), ft);
  };
  llvm::Value *y = b.CreateFMul(b.CreateFMul(p, pow2(n1)), pow2(n2));
  return b.CreateSelect(nan, x, y);
}

}  // namespace vacc::codegen::cpu
