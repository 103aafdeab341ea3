// progen: random programs for co-simulation. Every program is valid for its config (fields in
// range, every scratchpad and DRAM access in bounds), deadlock-free and race-free, so fsim and
// the RTL must leave identical DRAM; the same (config, seed) always gives the same program.
//
// Shape: N iterations of load -> compute -> store, single- or double-buffered. Iteration k
// uses scratchpad slot k mod B of INP, WGT and ACC; dependency tokens make the load of k wait
// for the compute of k-B to release its slot (compute -> load), the compute of k wait for its
// data (load -> compute) and for the store of k-B to drain its ACC slot (store -> compute), and
// the store of k wait for the compute of k (compute -> store); FINISH waits for the last store.
// Every producer precedes its consumer in program order, so in-order fetch cannot deadlock.
// Inside an iteration: 2D loads with random sizes, strides and zero padding; micro-op loads;
// ACC initialised by a reset GEMM or a padded ACC load; random GEMMs and ALU ops (all five,
// vector or immediate, negative shifts) over micro-op loops with random index factors; 2D
// stores of narrowed ACC tiles into a DRAM output slice of their own.
// Half of the programs run in overlap mode: each slot's ACC window has a part in each ACC bank,
// the operations pick a part at random, a stage's micro-ops arrive in one LOAD UOP, and GEMM /
// ALU instructions mostly carry the overlap flag (each stays in one bank, as isa/README.md,
// "Overlap", requires), so the RTL runs GEMM and ALU side by side.
#pragma once

#include <cstdint>
#include <string>

#include "vacc/isa/config.h"
#include "vacc/isa/program.h"

namespace vacc::progen {

isa::Program generate_program(const isa::HwConfig &config, uint64_t seed);

// A one-line description of what generate_program(config, seed) contains, for failure logs.
std::string describe_program(const isa::HwConfig &config, uint64_t seed);

}  // namespace vacc::progen
