// The timing of vacc_dma_rd (hw/rtl/vacc_dma_rd.sv) without its data: a 2D read of y rows of x
// elements, split into INCR bursts of at most `max_beats` beats that never cross 4 KiB, several
// in flight, and beats turned into elements (wide: an element spans several beats; narrow:
// several elements per beat, one per cycle). Registers are named as in the RTL (`_` suffix for
// its `_q`); update() computes the next state from this cycle's handshakes, as its
// always_comb/always_ff pair does.
#pragma once

#include <cstdint>

#include "burst_shape.h"
#include "vacc/support/error.h"

namespace vacc::sim::perf {

class DmaReader {
 public:
  DmaReader(int elem_bytes_log2, int max_beats, int bus_bytes_log2)
      : wide_(elem_bytes_log2 >= bus_bytes_log2),
        beats_per_elem_(wide_ ? 1u << (elem_bytes_log2 - bus_bytes_log2) : 1u),
        elems_per_beat_(wide_ ? 1u : 1u << (bus_bytes_log2 - elem_bytes_log2)),
        req_(elem_bytes_log2, bus_bytes_log2, static_cast<uint64_t>(max_beats)) {}

  struct Transfer {
    uint64_t base = 0;  // device-memory base (bytes)
    uint64_t elem = 0;  // first element, counted in elements from the base
    uint32_t y = 0, x = 0, stride = 0;
  };

  // --- Combinational outputs (from the registers of this cycle).
  // Request side: a burst is offered while the consumer's free space covers it (`space`:
  // elements; loads into a scratchpad have unlimited space).
  bool ar_valid(uint64_t space) const {
    return req_.offering() && outstanding_ + req_.elements() <= space;
  }
  uint32_t burst_beats() const { return static_cast<uint32_t>(req_.beats()); }
  // Data side: takes the routed beat this cycle.
  bool r_ready() const {
    return wide_ ? d_active_ : started_ && (lane_ == elems_per_beat_ - 1 || d_x_ == 1);
  }
  // An element is written to the consumer this cycle (the RTL's emit_q).
  bool elem_valid() const { return emit_q_; }
  bool busy() const { return req_.active() || d_active_ || emit_q_; }
  bool inflight() const { return outstanding_ != 0; }
  bool idle() const {
    return !req_.active() && !d_active_ && !emit_q_ && !started_ && rows_count_ == 0 &&
           outstanding_ == 0;
  }
  uint64_t elements_emitted() const { return emitted_; }

  // --- Next state. `start`: a transfer begins (non-null); `ar_fire`: the offered burst was
  // taken; `r_valid`: a beat is routed to this reader.
  void update(const Transfer *start, bool ar_fire, bool r_valid) {
    if (!start && idle()) return;  // nothing in flight: every register keeps its value
    // Every condition from this cycle's registers first (u_rows' full flag among them).
    const bool row_push = req_.setting_up() && (wide_ || rows_count_ < kRowFifoDepth);
    bool emit;
    if (wide_) {
      emit = r_valid && d_active_ && beat_ == beats_per_elem_ - 1;
      if (r_valid && d_active_) beat_ = emit ? 0 : beat_ + 1;
    } else {
      emit = started_ && r_valid;
      if (!started_ && rows_count_ > 0) {
        lane_ = rows_[rows_head_];
        rows_head_ = (rows_head_ + 1) % kRowFifoDepth;
        --rows_count_;
        started_ = true;
      } else if (emit) {
        lane_ = lane_ + 1 == elems_per_beat_ ? 0 : lane_ + 1;
        if (d_x_ == 1) started_ = false;
      }
    }
    if (start) {
      d_active_ = start->y != 0 && start->x != 0;
      d_rows_ = start->y;
      d_x_ = start->x;
    } else if (emit) {
      --d_x_;
      if (d_x_ == 0) {
        d_x_ = req_.x();
        if (--d_rows_ == 0) d_active_ = false;
      }
    }
    // Request side.
    outstanding_ -= emit_q_ ? 1 : 0;
    if (start) {
      req_.start(start->elem, start->y, start->x, start->stride);
      base_ = start->base;
    } else if (row_push) {
      req_.set_up_row(base_);
      if (!wide_) {
        rows_[(rows_head_ + rows_count_) % kRowFifoDepth] = req_.row_lane();
        ++rows_count_;
      }
    } else if (ar_fire) {
      outstanding_ += req_.elements();
      req_.fire();
    }
    emit_q_ = emit;
    emitted_ += emit ? 1 : 0;
  }

  // --- Fast-forward (machine.cc). True when nothing changes this cycle but what the rest of
  // the machine drives: no row set up, no beat taken, no element written, no row started.
  bool waiting(bool r_valid) const {
    return !req_.setting_up() && !r_valid && !emit_q_ && (wide_ || started_ || rows_count_ == 0);
  }
  // A wide reader that takes one beat per cycle for a while (a burst streaming in).
  bool can_stream() const { return wide_ && d_active_ && !req_.setting_up(); }
  // `k` cycles of one beat each, none of them the last of a burst (so no row ends).
  void advance_stream(uint64_t k) {
    const uint64_t emits = (beat_ + k) / beats_per_elem_;
    const bool last_emits = (beat_ + k - 1) % beats_per_elem_ == beats_per_elem_ - 1;
    VACC_CHECK(d_x_ > emits) << "timing model: a row ended inside a streamed burst";
    outstanding_ -= (emit_q_ ? 1 : 0) + emits - (last_emits ? 1 : 0);
    emit_q_ = last_emits;
    emitted_ += emits;
    d_x_ -= emits;
    beat_ = static_cast<uint32_t>((beat_ + k) % beats_per_elem_);
  }

 private:
  static constexpr uint32_t kRowFifoDepth = 4;  // vacc_dma_rd's u_rows

  const bool wide_;
  const uint32_t beats_per_elem_;
  const uint32_t elems_per_beat_;

  // Request side.
  RowBursts req_;
  uint64_t base_ = 0;
  uint64_t outstanding_ = 0;
  // Data side.
  bool d_active_ = false, emit_q_ = false;
  uint32_t d_rows_ = 0;
  uint64_t d_x_ = 0;
  uint32_t beat_ = 0;                  // wide: beat within the element
  uint32_t lane_ = 0;                  // narrow: element within the beat
  bool started_ = false;               // narrow: a row's first lane is known
  uint32_t rows_[kRowFifoDepth] = {};  // narrow: each row's first lane (u_rows)
  uint32_t rows_head_ = 0, rows_count_ = 0;
  uint64_t emitted_ = 0;
};

}  // namespace vacc::sim::perf
