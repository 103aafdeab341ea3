// The timing of vacc_load (hw/rtl/vacc_load.sv): LOAD INP and LOAD WGT, one at a time, each on
// its own MemLoad (read clients kInpClient / kWgtClient), in step with the compute engine
// through the load->compute and compute->load token queues.
#pragma once

#include "burst_shape.h"
#include "dep_seq.h"
#include "mem_load.h"
#include "timed_program.h"

namespace vacc::sim::perf {

class LoadEngine {
 public:
  LoadEngine(const isa::HwConfig &c, int bus_log2)
      : inp_(log2_bytes(c.inp_tile_bytes()), bus_log2),
        wgt_(log2_bytes(c.wgt_tile_bytes()), bus_log2) {}

  struct Eval {
    DepSeq::Wires seq;
    const TimedInsn *head = nullptr;
    bool pop_next = false, push_next = false;  // token handshakes this cycle
  };

  // `head`: the queue's head instruction (null when empty); c2l_avail / l2c_full: the token
  // queues' registers.
  Eval eval(const TimedInsn *head, bool c2l_avail, bool l2c_full) const {
    Eval e;
    e.head = head;
    const bool pop = head && head->deps.pop_next, push = head && head->deps.push_next;
    e.seq = seq_.eval(head != nullptr, /*can_start=*/true, !pop || c2l_avail,
                      !inp_.busy() && !wgt_.busy(), !push || !l2c_full);
    e.pop_next = e.seq.start && pop;
    e.push_next = e.seq.retire && push;
    return e;
  }

  MemLoad &inp() { return inp_; }
  MemLoad &wgt() { return wgt_; }
  const MemLoad &inp() const { return inp_; }
  const MemLoad &wgt() const { return wgt_; }

  void update(const Eval &e, uint64_t base, bool inp_ar_fire, bool inp_r_valid, bool wgt_ar_fire,
              bool wgt_r_valid) {
    const TimedInsn *start = e.seq.start ? e.head : nullptr;
    const bool is_inp = start && start->mem == isa::MemId::kInp;
    inp_.update(is_inp ? start : nullptr, base, inp_ar_fire, inp_r_valid);
    wgt_.update(start && !is_inp ? start : nullptr, base, wgt_ar_fire, wgt_r_valid);
    seq_.update(e.seq);
  }

 private:
  DepSeq seq_;
  MemLoad inp_, wgt_;
};

}  // namespace vacc::sim::perf
