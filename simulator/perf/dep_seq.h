// The token protocol of one engine, as vacc_dep_seq (hw/rtl/vacc_dep_seq.sv) runs it: the
// head instruction starts once its tokens are there (pops in that cycle), executes, and
// retires once the queues it pushes to have room (pushes in that cycle); the next one starts
// the cycle after. Also the engine's busy / stall / idle signals for the counters.
#pragma once

namespace vacc::sim::perf {

class DepSeq {
 public:
  struct Wires {
    bool start = false, retire = false;
    bool busy = false, stall = false, idle = false;
  };

  bool executing() const { return exec_q_; }

  // This cycle's decisions. `exec_done` and `room_ok` matter only while executing (the RTL
  // looks at exec_done from the cycle after the start on).
  Wires eval(bool valid, bool can_start, bool tokens_ok, bool exec_done, bool room_ok) const {
    Wires w;
    if (!exec_q_)
      w.start = valid && can_start && tokens_ok;
    else
      w.retire = exec_done && room_ok;
    w.busy = exec_q_ && !exec_done;
    w.stall = (!exec_q_ && valid && can_start && !tokens_ok) || (exec_q_ && exec_done && !room_ok);
    w.idle = !exec_q_ && !valid;
    return w;
  }
  void update(const Wires &w) {
    if (w.start)
      exec_q_ = true;
    else if (w.retire)
      exec_q_ = false;
  }

 private:
  bool exec_q_ = false;
};

}  // namespace vacc::sim::perf
