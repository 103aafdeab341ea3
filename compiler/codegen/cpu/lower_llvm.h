// Loop IR -> LLVM IR (private to the CPU backend). The module defines one external function
// `void <symbol>(i8** args)` that unpacks the parameters and calls the kernel body, an internal
// function whose buffer parameters are noalias (distinct buffers never overlap).
#pragma once

#include <memory>
#include <string>

#include "vacc/tir/func.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace vacc::codegen::cpu {

std::unique_ptr<llvm::Module> lower_to_llvm(const tir::Func &f, llvm::LLVMContext &ctx,
                                            const std::string &symbol);

}  // namespace vacc::codegen::cpu
