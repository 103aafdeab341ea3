// exp of float32 scalars and vectors as inline LLVM IR (private to the CPU backend). LLVM 14
// has no vector exp without a vector math library: llvm.exp on 16 lanes becomes 16 calls to
// libm's expf, which made Sigmoid two thirds of EfficientNet-B0's time. This is a range
// reduction and a polynomial, branch-free, in the lanes' own registers.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace vacc::codegen::cpu {

// exp(x) for a float or a vector of floats: within 1 ulp of the exact result where
// that is a normal float, 0 and subnormals below, +inf above FLT_MAX's logarithm, NaN for NaN.
llvm::Value *emit_exp_f32(llvm::IRBuilder<> &b, llvm::Value *x);

}  // namespace vacc::codegen::cpu
