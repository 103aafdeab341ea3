// The timing of vacc_store (hw/rtl/vacc_store.sv): STORE OUT reads y*x ACC tiles through its
// own ACC copy into a 4-entry element FIFO (one read per cycle while there is room), issues one
// AW burst per row piece (at most 256 beats, never across 4 KiB), sends the elements as W beats
// (wide: several beats per element; narrow: several elements gathered into one strobed beat,
// one per cycle), and retires once every write response is back. STORE INP
// (extensions.store_inp) reads the same way and writes one element per cycle into the INP
// scratchpad, in each cycle the load engine does not write it.
#pragma once

#include <cstdint>

#include "burst_shape.h"
#include "dep_seq.h"
#include "ring.h"
#include "timed_program.h"
#include "vacc/isa/config.h"

namespace vacc::sim::perf {

class StoreEngine {
 public:
  StoreEngine(const isa::HwConfig &config, int bus_log2);

  struct Eval {
    DepSeq::Wires seq;
    const TimedInsn *head = nullptr;
    bool pop_prev = false, push_prev = false;  // token handshakes this cycle
    bool aw_valid = false;
    uint32_t aw_beats = 0;
    bool w_valid = false;
  };

  // `head`: the store queue's head (null when empty); c2s_avail / s2c_full: token registers.
  Eval eval(const TimedInsn *head, bool c2s_avail, bool s2c_full) const;
  // Next state, with this cycle's AW / W handshakes, the registered write response, and
  // whether the load engine writes the INP scratchpad this cycle (STORE INP yields to it).
  void update(const Eval &e, uint64_t base, bool aw_fire, bool w_fire, bool b_valid,
              bool inp_load_we);

  uint64_t elements_stored() const { return stored_; }          // to OUT
  uint64_t elements_stored_inp() const { return stored_inp_; }  // to INP (STORE INP)
  bool writes_inp() const { return to_inp_; }                   // the running STORE is a STORE INP
  // Fast-forward: nothing moves but, possibly, write responses still to come.
  bool quiet() const {
    return !rd_active_ && !rd_pending_ && elems_ == 0 && !aw_.active() && wlen_.empty() &&
           (wide_ || (!full_ && !started_ && rows_.empty()));
  }
  // Fast-forward of a wide store streaming W beats (one per cycle, `e.w_fire`-ing now): the
  // cycles it can go on alike, whole element periods of beats_per_elem cycles in which the
  // ACC reader, the element FIFO and the beat within the element come back to the same state,
  // up to the burst's last beat and the reader's last read; 0 when it is not so.
  uint64_t stream_cycles(const Eval &e, bool aw_blocked) const;
  void advance_stream(uint64_t k);
  uint32_t beats_per_elem() const { return beats_per_elem_; }

 private:
  bool exec_done() const {
    return !rd_active_ && !rd_pending_ && elems_ == 0 && !aw_.active() && wlen_.empty() &&
           (wide_ || (!full_ && !started_)) && bcount_ == 0;
  }

  static constexpr uint32_t kElemFifoDepth = 4;
  const int out_log2_;
  const bool wide_;
  const uint32_t beats_per_elem_;
  const uint32_t elems_per_beat_;

  DepSeq seq_;
  // ACC reader and the element FIFO (u_elems).
  bool rd_active_ = false, rd_pending_ = false;
  uint64_t rd_left_ = 0;
  uint32_t elems_ = 0;
  // AW: bursts per row.
  RowBursts aw_;
  Ring<uint32_t, 4> wlen_;  // beats of each burst whose W beats are not all sent
  uint32_t bcount_ = 0;     // write responses outstanding
  uint64_t wbeat_ = 0;      // beat within the current burst
  // W packing: wide, the beat within the element; narrow, u_rows and the beat being gathered.
  uint32_t part_ = 0;
  Ring<uint32_t, 4> rows_;
  uint32_t lane_ = 0, left_ = 0;
  bool started_ = false, full_ = false;
  uint64_t stored_ = 0;
  bool to_inp_ = false;  // the running STORE writes INP
  uint64_t stored_inp_ = 0;
};

}  // namespace vacc::sim::perf
