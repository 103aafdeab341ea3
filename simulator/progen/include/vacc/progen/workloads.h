// Fixed-shape programs that measure the accelerator's performance properties (not random):
// a load/compute/store pipeline in a double-buffered and a serialized variant doing identical
// work, and a long stream of GEMMs over resident operands.
#pragma once

#include "vacc/isa/config.h"
#include "vacc/isa/program.h"

namespace vacc::progen {

// `iterations` rounds of: load `tiles` INP and WGT tiles, GEMM over all their pairs into ACC,
// store the ACC tiles. The GEMM runs `gemm_repeats` times per round (more compute per byte
// loaded, so that overlap matters). Double-buffered: two scratchpad slots and the dependency tokens let
// the load of round k+1 and the store of round k-1 overlap the compute of round k.
// Serialized: one slot, so each round waits for the previous one to be stored. Both write
// the same DRAM.
isa::Program make_pipeline_program(const isa::HwConfig &config, int iterations, int tiles,
                                   bool double_buffered, int gemm_repeats = 1);

// Operands loaded once, then `gemms` GEMM instructions of `uops_per_gemm` micro-op steps each
// (no tokens between them), then one store: the GEMM core should be busy nearly every cycle of
// the compute engine's busy window.
isa::Program make_gemm_stream(const isa::HwConfig &config, int gemms, int uops_per_gemm);

}  // namespace vacc::progen
