// The command queue: collects accelerator work as DMA, GEMM and ALU commands plus explicit
// dependency pushes and pops between engines, and turns it into an instruction stream:
// - micro-op kernels are deduplicated by content into a micro-op pool in device memory and
//   kept resident in the UOP scratchpad while they fit (reloaded after an eviction); when a
//   stream's kernels all fit, they are loaded once at its start;
// - a push is merged into the pushing engine's last instruction and a pop into the popping
//   engine's next one; a no-op instruction carries the flag only where that is impossible;
// - finish() balances every token queue and ends the stream with FINISH;
// - begin_step() starts the work of a further step (layer) in the same stream: one program
//   across consecutive accelerator steps, with no drain between them (see begin_step()).
// It never touches a device: a Session (session.h) runs what it records.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/insn.h"

namespace vacc::runtime {

struct Padding {
  uint32_t top = 0, bottom = 0, left = 0, right = 0;
};

// Two-level loops of a GEMM/ALU command; factors per operand are given with the command.
struct Loops {
  uint32_t out = 1, in = 1;
};

using UopKernel = std::vector<isa::Uop>;

struct RecordedStream {
  std::vector<isa::Insn> insns;
  std::vector<isa::Uop> uop_pool;  // to be written at the pool's device address
  uint64_t uop_loads = 0;          // LOAD UOP instructions in the stream
  // Index of each step's first instruction (begin_step(); the first step starts at 0).
  std::vector<size_t> step_starts;
};

class CommandQueue {
 public:
  // `uop_pool_element`/`uop_pool_capacity`: where (in micro-ops from the arena base) and how
  // many micro-ops the device-memory pool for kernels may hold.
  CommandQueue(const isa::HwConfig &config, uint64_t uop_pool_element, uint64_t uop_pool_capacity);

  // DMA commands; `dram_element` counts elements of the memory's kind from the arena base.
  void load(isa::MemId mem, uint32_t sram, uint64_t dram_element, uint32_t y, uint32_t x,
            uint32_t stride, Padding pad = {});
  void store(uint32_t sram, uint64_t dram_element, uint32_t y, uint32_t x, uint32_t stride);
  // STORE INP (extensions.store_inp): y*x ACC tiles narrowed into INP from entry `inp_index`.
  void store_inp(uint32_t sram, uint32_t inp_index, uint32_t y, uint32_t x, uint32_t stride);

  void gemm(const UopKernel &kernel, Loops loops, isa::LoopFactors acc, isa::LoopFactors inp,
            isa::LoopFactors wgt, bool reset, bool overlap = false, bool assign = false);
  // imm: the immediate operand, or nullopt for the vector operand (micro-op src); with the
  // vector operand the instruction's immediate field holds `vector_imm` (SHR_CLIP's bounds).
  void alu(const UopKernel &kernel, isa::AluOp op, Loops loops, isa::LoopFactors dst,
           isa::LoopFactors src, std::optional<int32_t> imm, bool overlap = false,
           int32_t vector_imm = 0);

  // `from` sends a token to its neighbour `to` after all its work so far.
  void dep_push(isa::Engine from, isa::Engine to);
  // `to` waits for a token from its neighbour `from` before its next work.
  void dep_pop(isa::Engine from, isa::Engine to);

  // Starts a further step in this stream: the compute engine waits for the earlier steps' last
  // loads and stores (their scratchpad regions and DRAM results are then free). The load engine
  // waits where the caller says, each once per step and in this order: load_waits_for_compute()
  // before its first load into scratchpad the earlier steps' compute may still read, then
  // load_waits_for_stores() before its first load of anything an earlier step stores (and before
  // the step's own tokens). In between go the loads that need neither, such as constant weights
  // into free scratchpad.
  void begin_step();
  void load_waits_for_compute();
  void load_waits_for_stores();

  size_t size() const { return insns_.size(); }
  // Balances the token queues, appends FINISH (after the stores), and returns the stream.
  RecordedStream finish();

 private:
  // Token queue index of a (from, to) pair of neighbouring engines.
  static int queue_of(isa::Engine from, isa::Engine to);
  void emit(isa::Insn insn);
  isa::Insn noop(isa::Engine engine) const;
  // Makes `kernel` resident in the UOP scratchpad; returns its first index there.
  uint32_t resident(const UopKernel &kernel);
  // A STORE to OUT (dram_base: a DRAM element) or, with extensions.store_inp, to INP.
  void emit_store(isa::MemId mem, uint32_t sram, uint32_t dram_base, uint32_t y, uint32_t x,
                  uint32_t stride);
  void check_encodable(const isa::Insn &insn, const char *command) const;
  // Moves the stream's micro-op loads to its start (merged where they continue each other)
  // when no eviction reuses a scratchpad index.
  void hoist_uop_loads();
  // Pops every token still in flight, so that later pops wait for later pushes.
  void balance_tokens(bool but_compute_to_load = false);

  const isa::HwConfig config_;
  uint64_t pool_element_;
  uint64_t pool_capacity_;
  std::vector<isa::Insn> insns_;
  std::array<int, isa::kNumEngines> last_{-1, -1, -1};  // last instruction index per engine
  // Pops waiting to be attached to an engine's next instruction: [engine][0=prev, 1=next].
  std::array<std::array<int, 2>, isa::kNumEngines> pending_pops_{};
  std::array<int64_t, 4> tokens_{};  // pushes minus pops per token queue
  std::vector<isa::Uop> pool_;
  std::map<std::vector<uint64_t>, uint64_t> pool_index_;     // kernel -> offset in the pool
  std::map<std::vector<uint64_t>, uint32_t> resident_;        // kernel -> UOP scratchpad index
  uint32_t uop_next_ = 0;                                     // next free UOP index
  bool evicted_ = false;  // this step reloaded the UOP scratchpad from index 0
  uint64_t uop_loads_ = 0;
  std::vector<size_t> step_starts_{0};
  int64_t boundary_pops_ = 0;  // compute-to-load tokens load_waits_for_compute() takes
};

}  // namespace vacc::runtime
