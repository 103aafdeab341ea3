// fsim: the functional simulator. Executes a program's instructions with the semantics of
// isa/README.md, bit-exactly, on a device-memory image. Engines are interleaved in program
// order as far as the dependency tokens allow, so a race-free program gives the same memory
// as the hardware. A pop that can never be satisfied is reported as a deadlock; every
// scratchpad and DRAM access is bounds-checked. Both are vacc::Error, never a crash.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/insn.h"

namespace vacc::sim {

struct FsimStats {
  std::array<uint64_t, isa::kNumEngines> insns{};  // instructions executed per engine
  uint64_t gemm_uops = 0;                           // micro-ops through the GEMM core
  uint64_t macs = 0;                                // multiply-accumulates (reset ops excluded)
  uint64_t alu_ops = 0;                             // element operations on the ALU
  std::array<uint64_t, isa::kNumMemIds> load_bytes{};   // DRAM bytes read per memory kind
  std::array<uint64_t, isa::kNumMemIds> store_bytes{};  // DRAM bytes written per memory kind
};

struct FsimOptions {
  // false: check and count everything, move no data (INP/WGT/ACC loads, GEMM/ALU arithmetic
  // and stores are skipped; micro-ops are still loaded): the device memory keeps its input.
  // For timing-only runs of the perf engine, whose timing does not depend on data.
  bool data = true;
  // Stop the run with a vacc::Error once it would exceed this many operations (0: no limit):
  // an operation is an instruction, a micro-op issued by a GEMM or ALU loop, or a tile moved by
  // a LOAD or STORE. A single GEMM can issue billions of micro-ops, so the limit is charged
  // before each instruction runs, and no program can keep fsim busy for long unasked.
  uint64_t op_limit = 0;
  // Among the instructions whose tokens let them run, the latest in program order goes first
  // (default: the earliest, which is what the hardware's results of a race-free program are):
  // every engine runs as far ahead as its tokens allow, so a program whose results lean on
  // timing rather than on its tokens (a load overwriting scratchpad a GEMM has yet to read, a
  // load of DRAM a store has yet to write) gives other results. For checking token discipline.
  bool latest_first = false;
};

// An instruction's operations as FsimOptions::op_limit counts them.
uint64_t insn_operations(const isa::Insn &insn);

class Fsim {
 public:
  explicit Fsim(const isa::HwConfig &config, FsimOptions options = {});
  ~Fsim();
  Fsim(const Fsim &) = delete;
  Fsim &operator=(const Fsim &) = delete;

  // Runs `insn_count` instructions read from byte `insn_offset` of `dram`, which is the whole
  // device memory and is modified in place. Scratchpads start zeroed on each run.
  void run(std::vector<uint8_t> &dram, uint64_t insn_offset, uint32_t insn_count);
  const FsimStats &stats() const { return stats_; }

 private:
  class Machine;
  const isa::HwConfig config_;
  const FsimOptions options_;
  std::unique_ptr<Machine> machine_;
  FsimStats stats_;
};

}  // namespace vacc::sim
