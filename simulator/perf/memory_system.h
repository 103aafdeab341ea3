// The timing of everything between the engines and DRAM: vacc_axi_rd_arb (round-robin AR
// arbitration of five read clients through a registered stage, an order FIFO routing each
// burst's beats back), the two-entry register slices on every m_axi_gmem channel (vacc_top),
// and the DRAM model of simulator/rtl/axi_memory.cc (latency, in-order read data, bursts in
// flight per direction, one bytes-per-cycle budget shared by reads and writes, write responses
// a latency after the last beat). No data moves: a read beat is a `last` flag.
#pragma once

#include <cstdint>
#include <deque>

#include "ring.h"
#include "timed_program.h"
#include "vacc/isa/config.h"

namespace vacc::sim::perf {

// Read clients in vacc_top's order (their ids at the arbiter).
enum ReadClient { kFetchClient, kInpClient, kWgtClient, kUopClient, kAccClient, kNumClients };

struct MemoryCounters {
  uint64_t read_bursts = 0, read_beats = 0, write_bursts = 0, write_beats = 0;
};

class MemorySystem {
 public:
  MemorySystem(const isa::HwConfig &config, int max_outstanding);

  // --- Outputs of this cycle (registers).
  bool r_valid(int client) const {
    return !r_slice_.empty() && !order_.empty() && order_.front() == client;
  }
  bool aw_ready() const { return !aw_slice_.full(); }
  bool w_ready() const { return !w_slice_.full(); }
  bool b_valid() const { return b_valid_q_; }

  // Round-robin grant among the clients offering a burst, if the registered AR stage can take
  // it this cycle (vacc_axi_rd_arb's `capture`); -1 if none is taken.
  int arbitrate(const bool ar_valid[kNumClients]) const {
    if (order_.full() || (ar_valid_q_ && ar_slice_.full())) return -1;
    for (int k = 0, c = rr_; k < kNumClients; ++k, c = c + 1 == kNumClients ? 0 : c + 1)
      if (ar_valid[c]) return c;
    return -1;
  }

  // Next state at the end of cycle `now`: `captured` (from arbitrate) with its burst length,
  // each client's r_ready, and the store engine's AW / W handshakes into the slices.
  void update(uint64_t now, int captured, uint32_t captured_beats, const bool r_ready[kNumClients],
              bool aw_fire, uint32_t aw_beats, bool w_fire);

  // Nothing accepted and not yet answered, and every slice empty.
  bool idle() const;

  // --- Fast-forward (machine.cc), asked after this cycle's decisions.
  // No AR moves this cycle or until a read burst completes: nothing captured, the registered
  // stage empty or blocked by a full slice, the slice empty or the DRAM full.
  bool ar_quiet(int captured) const {
    return captured < 0 && (!ar_valid_q_ || ar_slice_.full()) &&
           (ar_slice_.empty() || reads_.size() >= max_outstanding_);
  }
  // The AW channel cannot move: the slice full and the DRAM taking no more write bursts.
  bool aw_blocked() const { return aw_slice_.full() && writes_.size() >= max_outstanding_; }
  // W beats stream: one enters the W slice this cycle while the DRAM takes the one before, the
  // budget staying full (no read beat can come while this holds: see reads_waiting), no AW to
  // accept. Returns the cycles the DRAM's burst allows (its last beat excluded), else 0.
  uint64_t write_stream_cycles() const {
    if (!wready_ || w_slice_.count != 1 || credit_ != credit_cap_ ||
        bytes_per_cycle_ < bus_bytes_ || b_valid_q_ ||
        (!aw_slice_.empty() && writes_.size() < max_outstanding_))
      return 0;
    return writes_.front() - 1;
  }
  // No write in flight but, possibly, responses waiting out their latency.
  bool writes_idle() const {
    return aw_slice_.empty() && w_slice_.count == 0 && writes_.empty() && !b_valid_q_;
  }
  // Cycles from `now` until the next write response is due (kForever: none).
  uint64_t response_wait(uint64_t now) const;
  // The client a read beat streams to: a beat enters the R slice this cycle while the beat
  // before it (not a burst's last) leaves for that client; -1 if not so.
  int streaming_client() const {
    if (!rvalid_ || r_slice_.size() != 1 || r_slice_.front() || order_.empty() ||
        credit_ != credit_cap_ || bytes_per_cycle_ < bus_bytes_)
      return -1;
    return order_.front();
  }
  // Beats of the streaming burst still in DRAM.
  uint64_t stream_beats_left() const { return reads_.front().beats_left; }
  // No read beat moves this cycle; cycles from `now` until one can (kForever: none pending).
  bool reads_waiting() const { return !rvalid_ && r_slice_.empty(); }
  uint64_t read_wait(uint64_t now) const;
  // Applies `k` quiet cycles from `now`: either a read stream of one beat per cycle
  // (`stream`), or nothing but the budget refilling and the latencies running out.
  void advance(uint64_t now, uint64_t k, bool stream, bool write_stream = false);
  const MemoryCounters &counters() const { return counters_; }

 private:
  struct ReadBurst {
    uint64_t beats_left = 0;
    uint64_t ready = 0;  // first beat not before this cycle
  };

  const int64_t bus_bytes_;
  const int64_t bytes_per_cycle_;
  const int64_t credit_cap_;
  const uint64_t latency_;
  const uint32_t max_outstanding_;

  // vacc_axi_rd_arb: the registered AR stage, round-robin pointer, order FIFO (depth 16).
  bool ar_valid_q_ = false;
  uint32_t ar_beats_q_ = 0;
  int rr_ = 0;
  Ring<uint8_t, 16> order_;
  // vacc_top's register slices: AR and AW hold burst lengths, R the beats' last flags.
  Ring<uint32_t, 2> ar_slice_;
  Ring<bool, 2> r_slice_;
  Ring<uint32_t, 2> aw_slice_;
  struct WSlice {
    bool full() const { return count == 2; }
    uint32_t count = 0;
  } w_slice_;
  bool b_valid_q_ = false;
  // axi_memory.cc: bursts in flight, the bandwidth budget and the outputs it prepared.
  Ring<ReadBurst, 64> reads_;
  Ring<uint64_t, 64> writes_;
  std::deque<uint64_t> responses_;
  int64_t credit_ = 0;
  bool rvalid_ = false, rlast_ = false, wready_ = false, bvalid_ = false;
  MemoryCounters counters_;
};

}  // namespace vacc::sim::perf
