#include "store_engine.h"

#include <algorithm>

#include "burst_shape.h"

namespace vacc::sim::perf {

StoreEngine::StoreEngine(const isa::HwConfig &config, int bus_log2)
    : out_log2_(log2_bytes(config.out_tile_bytes())),
      wide_(out_log2_ >= bus_log2),
      beats_per_elem_(wide_ ? 1u << (out_log2_ - bus_log2) : 1u),
      elems_per_beat_(wide_ ? 1u : 1u << (bus_log2 - out_log2_)),
      aw_(out_log2_, bus_log2, /*max_beats=*/256) {}

StoreEngine::Eval StoreEngine::eval(const TimedInsn *head, bool c2s_avail, bool s2c_full) const {
  Eval e;
  e.head = head;
  const bool pop = head && head->deps.pop_prev, push = head && head->deps.push_prev;
  e.seq = seq_.eval(head != nullptr, /*can_start=*/true, !pop || c2s_avail, exec_done(),
                    !push || !s2c_full);
  e.pop_prev = e.seq.start && pop;
  e.push_prev = e.seq.retire && push;
  e.aw_valid = aw_.offering() && !wlen_.full() && bcount_ < 0x8000;
  e.aw_beats = static_cast<uint32_t>(aw_.beats());
  e.w_valid = !wlen_.empty() && (wide_ ? elems_ > 0 : full_);
  return e;
}

uint64_t StoreEngine::stream_cycles(const Eval &e, bool aw_blocked) const {
  if (!wide_ || e.seq.start || e.seq.retire || wlen_.empty() || aw_.setting_up() ||
      (e.aw_valid && !aw_blocked))
    return 0;
  // One period, every cycle with a W beat: the element FIFO, the ACC reader and the beat
  // within the element must come back as they are, having read and sent one element.
  uint32_t part = part_, elems = elems_;
  bool pending = rd_pending_;
  uint64_t reads = 0;
  for (uint32_t c = 0; c < beats_per_elem_; ++c) {
    if (elems == 0) return 0;  // no beat to send
    const bool re = rd_active_ && elems + (pending ? 1 : 0) < kElemFifoDepth;
    const bool pop = part == beats_per_elem_ - 1;
    part = pop ? 0 : part + 1;
    elems += (pending ? 1 : 0) - (pop ? 1 : 0);
    pending = re;
    reads += re;
  }
  if (part != part_ || elems != elems_ || pending != rd_pending_ || reads != 1 || !rd_active_)
    return 0;
  // Periods whose reads leave the reader active, none reaching the burst's last beat.
  const uint64_t periods = rd_left_ - 1;
  const uint64_t beats = wlen_.front() - 1 - wbeat_;  // cycles before the last beat
  return std::min(periods * beats_per_elem_, beats - beats % beats_per_elem_);
}

void StoreEngine::advance_stream(uint64_t k) {
  const uint64_t periods = k / beats_per_elem_;
  wbeat_ += k;
  rd_left_ -= periods;
  stored_ += periods;
}

void StoreEngine::update(const Eval &e, uint64_t base, bool aw_fire, bool w_fire, bool b_valid,
                         bool inp_load_we) {
  const TimedInsn *start = e.seq.start ? e.head : nullptr;
  const bool nonempty = start && start->y_size != 0 && start->x_size != 0;
  // STORE INP: the element FIFO's head goes into INP unless the load engine writes it.
  const bool inp_pop = to_inp_ && elems_ > 0 && !inp_load_we;
  // Conditions from this cycle's registers.
  const bool acc_re = rd_active_ && elems_ + (rd_pending_ ? 1 : 0) < kElemFifoDepth;
  const bool row_push = aw_.setting_up() && (wide_ || !rows_.full());
  const bool w_last = !wlen_.empty() && wbeat_ + 1 == wlen_.front();
  bool elem_pop = false;

  // W: the beat within the burst, and the element(s) a beat carries.
  if (w_fire) wbeat_ = w_last ? 0 : wbeat_ + 1;
  if (wide_) {
    elem_pop = w_fire && part_ == beats_per_elem_ - 1;
    if (w_fire) part_ = elem_pop ? 0 : part_ + 1;
  } else {
    const bool row_pop = !full_ && !started_ && !rows_.empty();
    elem_pop = !full_ && started_ && elems_ > 0;
    if (w_fire) full_ = false;
    if (row_pop) {
      lane_ = rows_.front();
      rows_.pop();
      started_ = true;
      left_ = aw_.x();
    } else if (elem_pop) {
      if (lane_ == elems_per_beat_ - 1 || left_ == 1) full_ = true;
      lane_ = lane_ + 1 == elems_per_beat_ ? 0 : lane_ + 1;
      if (--left_ == 0) started_ = false;
    }
  }
  if (w_fire && w_last) wlen_.pop();
  // The element FIFO and the ACC reader.
  if (rd_pending_) ++elems_;
  if (elem_pop) {
    --elems_;
    ++stored_;
  }
  if (inp_pop) {
    --elems_;
    ++stored_inp_;
  }
  if (start) {
    to_inp_ = start->mem == isa::MemId::kInp;
    rd_active_ = nonempty;
    rd_left_ = uint64_t{start->y_size} * start->x_size;
  } else if (acc_re) {
    if (--rd_left_ == 0) rd_active_ = false;
  }
  rd_pending_ = acc_re;
  // AW.
  if (start) {
    if (!to_inp_) aw_.start(start->dram_base, start->y_size, start->x_size, start->x_stride);
  } else if (row_push) {
    aw_.set_up_row(base);
    if (!wide_) rows_.push(aw_.row_lane());
  } else if (aw_fire) {
    aw_.fire();
  }
  if (aw_fire) wlen_.push(e.aw_beats);
  if (aw_fire && !b_valid) ++bcount_;
  if (!aw_fire && b_valid) --bcount_;
  seq_.update(e.seq);
}

}  // namespace vacc::sim::perf
