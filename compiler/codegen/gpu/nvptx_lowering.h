// One planned kernel to an NVPTX kernel function in m (private to codegen/gpu).
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "vacc/codegen/gpu/ptx.h"

namespace vacc::codegen::gpu {

void lower_kernel(const Kernel &k, llvm::LLVMContext &ctx, llvm::Module &m);

}  // namespace vacc::codegen::gpu
