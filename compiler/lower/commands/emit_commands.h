// The first step of codegen: runs the host loops of the final IR and emits one command per
// intrinsic statement instance, each GEMM/ALU with its one micro-op, every field evaluated
// and checked against its ISA width.
#pragma once

#include <vector>

#include "codegen_commands.h"
#include "vacc/isa/config.h"
#include "vacc/tir/func.h"

namespace vacc::lower {

// `buffers` receives one entry per parameter of f (the DRAM operands), in order.
CodegenCommands emit_commands(const tir::Func &f, const isa::HwConfig &config,
                              std::vector<isa::CommandBuffer> *buffers);

}  // namespace vacc::lower
