// Accelerator code generation: the final loop IR of compiler/pipeline (plain loops around
// dma.load/dma.store, gemm/alu with folded loops and dep.push/pop) to a command list
// (isa/command.h). The IR's loops are host loops: codegen evaluates them, so every
// iteration becomes its own commands. Then
//   - consecutive GEMMs (ALUs) that differ only in their micro-op become one command with a
//     multi-micro-op kernel (merge_kernels.cc), when that cannot change the result;
//   - adjacent DMA rows of one buffer become one 2D transfer (coalesce_dma.cc);
//   - each virtual thread's first GEMMs are split by the loads they read, so the GEMM core
//     starts while the pipeline fills (split_first_gemms.cc); with overlap, GEMM resets
//     become ALU multiplies by 0 that run beside the other thread's GEMMs (reset_on_alu.cc);
//   - dependency tokens are rebuilt from the scratchpad conflicts of the final order: each
//     command waits for exactly the last conflicting command of the neighbouring engine
//     (insert_tokens.cc), which is what lets two virtual threads overlap; a program whose
//     loads and stores share a DRAM buffer keeps the IR's tokens, relaxed (relax_tokens.cc);
//   - kernels are deduplicated by content.
// Every field is checked against its ISA width; a violation is a vacc::Error naming the
// operator, the IR statement, the field and the loop iteration.
#pragma once

#include <cstdint>

#include "vacc/isa/command.h"
#include "vacc/isa/config.h"
#include "vacc/tir/func.h"

namespace vacc::codegen::accel {

struct CodegenOptions {
  // Largest program the caller will run (the runtime's instruction reservation); counted
  // as DMA + GEMM + ALU commands (the queue adds micro-op loads and a few no-ops).
  uint64_t max_insns = uint64_t{1} << 22;
  // Largest number of distinct micro-ops the program may keep in its device-memory pool.
  uint64_t max_uops = uint64_t{1} << 16;
  // Largest micro-op kernel merged from consecutive GEMMs/ALUs (capped at half the UOP
  // scratchpad, so two kernels stay resident).
  uint32_t max_kernel_uops = 1024;
  bool stagger_threads = true;
  bool merge_kernels = true;
  bool coalesce_dma = true;
  bool relax_tokens = true;  // false: the IR's tokens exactly as inserted
  bool overlap = true;       // GEMM/ALU overlap flags where the ACC banks allow (mark_overlap)
  bool split_first_gemms = true;  // each thread's first GEMMs split by their loads
  bool reset_on_alu = true;  // with overlap: accumulators zeroed by the ALU (reset_on_alu)
};

// Generates the command list of `f`. Its buffers are f.params in order (their memory kind
// from the DMA commands that use them). Throws vacc::Error on a field that does not fit,
// scalar code the accelerator cannot run, or a program beyond the limits of `options`.
isa::CommandList generate_commands(const tir::Func &f, const isa::HwConfig &config,
                                   const CodegenOptions &options = {});

}  // namespace vacc::codegen::accel
