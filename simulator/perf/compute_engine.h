// The timing of vacc_compute (hw/rtl/vacc_compute.sv): LOAD UOP / LOAD ACC on their own
// MemLoads (read clients kUopClient / kAccClient), GEMM and ALU handed to their units, FINISH.
//
// Dispatch (in order from the compute queue): a GEMM (ALU) goes to its unit once the unit's
// loop is free and the other unit has no work left on the banks it may touch (both without the
// overlap flag; with it, the bank of its first micro-op's dst, read through the unit's idle UOP
// port the cycle before: one cycle of dispatch latency). It leaves the queue the cycle after.
// Its tokens wait in a pending-push queue per token queue (depth 8) until the work they vouch
// for has ended: push_prev once every compute instruction up to it has, push_next once its own
// unit's have and the other unit's before it have or that unit has no work on its banks.
// LOAD UOP, LOAD ACC and FINISH wait for both units to drain.
#pragma once

#include <cstdint>
#include <vector>

#include "compute_units.h"
#include "dep_seq.h"
#include "mem_load.h"
#include "ring.h"
#include "timed_program.h"
#include "vacc/isa/config.h"

namespace vacc::sim::perf {

class ComputeEngine {
 public:
  ComputeEngine(const isa::HwConfig &config, int bus_log2);

  struct Eval {
    DepSeq::Wires seq;
    const TimedInsn *head = nullptr;
    bool busy = false, stall = false, idle = false;  // the engine's counter signals
    bool pop_prev = false, pop_next = false;         // token handshakes this cycle
    bool push_prev = false, push_next = false;
    bool peek = false;  // a unit's idle UOP port reads the head's first micro-op
    uint8_t head_banks = 3;
  };

  // `head`: the compute queue's head (null when empty); the token queues' registers.
  Eval eval(const TimedInsn *head, bool l2c_avail, bool s2c_avail, bool c2l_full,
            bool c2s_full) const;
  void update(const Eval &e, uint64_t base, bool uop_ar_fire, bool uop_r_valid, bool acc_ar_fire,
              bool acc_r_valid);

  // The ACC bank of each micro-op's dst, as LOAD UOP writes the scratchpad.
  void set_uop_bank(uint32_t index, uint8_t bank) {
    if (index < uop_bank_.size()) uop_bank_[index] = bank;
  }

  MemLoad &uop_load() { return uop_ld_; }
  MemLoad &acc_load() { return acc_ld_; }
  const MemLoad &uop_load() const { return uop_ld_; }
  const MemLoad &acc_load() const { return acc_ld_; }
  const GemmUnit &gemm() const { return gemm_; }
  const AluUnit &alu() const { return alu_; }
  bool finished() const { return finish_; }

  // Fast-forward: this cycle changes none of the engine's own registers (the units aside).
  bool steady(const Eval &e) const { return e.peek == peek_valid_; }
  GemmUnit &gemm() { return gemm_; }
  AluUnit &alu() { return alu_; }

 private:
  struct Pending {
    bool alu = false;   // the pusher's unit (LOAD / FINISH: the GEMM side, needs met)
    uint8_t banks = 3;  // the banks its token vouches for
    uint64_t gemm_need = 0, alu_need = 0;  // unit ends that must have happened
  };
  static constexpr uint32_t kPendDepth = 8;

  DepSeq seq_;
  bool peek_valid_ = false;
  Ring<Pending, kPendDepth> pending_[2];  // 0: to the load engine, 1: to the store engine
  uint64_t gemm_issued_ = 0, gemm_ended_ = 0, alu_issued_ = 0, alu_ended_ = 0;
  MemLoad uop_ld_, acc_ld_;
  GemmUnit gemm_;
  AluUnit alu_;
  bool finish_ = false;
  std::vector<uint8_t> uop_bank_;
};

}  // namespace vacc::sim::perf
