// The timing of vacc_fetch (hw/rtl/vacc_fetch.sv): instructions read with a DmaReader in
// bursts of at most 128 bytes, requested only while the 32-entry buffer has room for every
// instruction in flight (credits), and dispatched in program order, one per cycle, to the
// target engine's queue, waiting while that queue is full.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dma_reader.h"
#include "vacc/isa/insn.h"

namespace vacc::sim::perf {

class Fetch {
 public:
  static constexpr uint32_t kBufferDepth = 32;

  explicit Fetch(int bus_bytes_log2)
      : dma_(/*elem_bytes_log2=*/4, max_beats(bus_bytes_log2), bus_bytes_log2) {}

  DmaReader &dma() { return dma_; }
  const DmaReader &dma() const { return dma_; }
  // Free buffer entries (the reader's space_i).
  uint64_t space() const { return kBufferDepth - buffered_; }
  // The program index of the instruction at the buffer's head, if one is there.
  bool has_head() const { return buffered_ > 0; }
  uint32_t head() const { return next_; }
  // Every instruction has been dispatched (done_o).
  bool done() const { return next_ == count_; }

  // Next state. `go`: the run starts fetching `count` instructions at byte `offset` from
  // `base`; `dispatched`: the head went to its queue this cycle.
  void update(bool go, uint64_t base, uint64_t offset, uint32_t count, bool ar_fire, bool r_valid,
              bool dispatched) {
    if (dma_.elem_valid()) ++buffered_;
    if (dispatched) {
      --buffered_;
      ++next_;
    }
    if (go) count_ = count;
    DmaReader::Transfer t{base, offset >> 4, 1, count, 0};
    dma_.update(go ? &t : nullptr, ar_fire, r_valid);
  }

 private:
  // vacc_fetch's MaxBeats: 128 bytes per burst (one beat on a bus of 128 bytes or more).
  static int max_beats(int bus_bytes_log2) {
    const int bus = 1 << bus_bytes_log2;
    return bus >= 128 ? 1 : 128 / bus;
  }

  DmaReader dma_;
  uint64_t buffered_ = 0;  // u_buf's count
  uint32_t next_ = 0;      // idx_q: the next instruction to dispatch
  uint32_t count_ = 0;     // count_q
};

}  // namespace vacc::sim::perf
