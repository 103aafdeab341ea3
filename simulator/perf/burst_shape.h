// The request side that vacc_dma_rd and vacc_store share: a 2D transfer of y rows of x
// elements (row r at element elem + r*stride), each row set up in a cycle of its own and then
// split into AXI bursts of at most `max_beats` beats of the bus width that never cross a 4 KiB
// page (a row may start inside a beat).
#pragma once

#include <algorithm>
#include <cstdint>

namespace vacc::sim::perf {

// log2 of a power-of-two byte count (element sizes, the bus width).
inline int log2_bytes(uint64_t bytes) {
  int l = 0;
  while ((uint64_t{1} << l) < bytes) ++l;
  return l;
}

class RowBursts {
 public:
  RowBursts(int elem_log2, int bus_log2, uint64_t max_beats)
      : elem_log2_(elem_log2), bus_log2_(bus_log2), max_beats_(max_beats) {}

  bool active() const { return active_; }
  bool setting_up() const { return active_ && setup_; }
  bool offering() const { return active_ && !setup_; }  // a burst is ready to request
  uint64_t beats() const { return beats_; }
  uint64_t elements() const { return covered_ >> elem_log2_; }  // of the offered burst
  uint32_t x() const { return x_; }
  // The lane (element within the bus word) the current row starts at.
  uint32_t row_lane() const {
    return static_cast<uint32_t>((addr_ & ((uint64_t{1} << bus_log2_) - 1)) >> elem_log2_);
  }

  void start(uint64_t elem, uint32_t y, uint32_t x, uint32_t stride) {
    active_ = y != 0 && x != 0;
    setup_ = true;
    rows_left_ = y;
    row_elem_ = elem;
    x_ = x;
    stride_ = stride;
  }
  // The row set-up cycle: its byte range from `base` (device memory's base address).
  void set_up_row(uint64_t base) {
    setup_ = false;
    addr_ = base + (row_elem_ << elem_log2_);
    bytes_left_ = uint64_t{x_} << elem_log2_;
    shape();
  }
  // The offered burst was taken: the next one, or the next row's set-up, or the end.
  void fire() {
    addr_ += covered_;
    bytes_left_ -= covered_;
    if (last_of_row_) {
      row_elem_ += stride_;
      if (--rows_left_ == 0)
        active_ = false;
      else
        setup_ = true;
    }
    shape();
  }

 private:
  // The RTL's beat_off .. last_of_row.
  void shape() {
    const uint64_t mask = (uint64_t{1} << bus_log2_) - 1;
    const uint64_t beat_off = addr_ & mask;
    const uint64_t beats_row = (beat_off + bytes_left_ + mask) >> bus_log2_;
    const uint64_t page_off = (addr_ & 0xFFF) & ~mask;
    const uint64_t beats_page = (4096 - page_off) >> bus_log2_;
    beats_ = std::min({max_beats_, beats_row, beats_page});
    covered_ = std::min((beats_ << bus_log2_) - beat_off, bytes_left_);
    last_of_row_ = covered_ == bytes_left_;
  }

  const int elem_log2_, bus_log2_;
  const uint64_t max_beats_;
  bool active_ = false, setup_ = false, last_of_row_ = false;
  uint32_t rows_left_ = 0, x_ = 0, stride_ = 0;
  uint64_t row_elem_ = 0, addr_ = 0, bytes_left_ = 0, beats_ = 0, covered_ = 0;
};

}  // namespace vacc::sim::perf
