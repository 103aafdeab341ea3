#include "memory_system.h"

#include <algorithm>

namespace vacc::sim::perf {

MemorySystem::MemorySystem(const isa::HwConfig &config, int max_outstanding)
    : bus_bytes_(config.bus_bits / 8),
      bytes_per_cycle_(config.mem_bytes_per_cycle),
      credit_cap_(std::max<int64_t>(config.bus_bits / 8, config.mem_bytes_per_cycle)),
      latency_(static_cast<uint64_t>(config.mem_latency_cycles)),
      max_outstanding_(static_cast<uint32_t>(std::max(1, max_outstanding))) {
  VACC_CHECK(max_outstanding_ <= 64) << "timing model: at most 64 bursts in flight";
  credit_ = credit_cap_;
}

bool MemorySystem::idle() const {
  return !ar_valid_q_ && order_.empty() && ar_slice_.empty() && r_slice_.empty() &&
         aw_slice_.empty() && w_slice_.count == 0 && reads_.empty() && writes_.empty() &&
         responses_.empty() && !b_valid_q_;
}

uint64_t MemorySystem::response_wait(uint64_t now) const {
  if (responses_.empty()) return kForever;
  return responses_.front() > now ? responses_.front() - now : 0;
}

uint64_t MemorySystem::read_wait(uint64_t now) const {
  if (reads_.empty()) return kForever;
  // The first cycle c > now with the burst ready and the budget refilled to a beat (outputs
  // for cycle c are prepared at the end of c - 1).
  uint64_t c = std::max(reads_.front().ready, now + 1);
  if (credit_ < bus_bytes_) {
    const uint64_t refill =
        static_cast<uint64_t>((bus_bytes_ - credit_ + bytes_per_cycle_ - 1) / bytes_per_cycle_);
    c = std::max(c, now + refill);
  }
  return c - now;
}

void MemorySystem::advance(uint64_t now, uint64_t k, bool stream, bool write_stream) {
  const uint64_t next = now + k;
  if (write_stream) {
    // The budget stays full, the W slice holds one beat, wready stays high.
    writes_.front() -= k;
    counters_.write_beats += k;
    rvalid_ = !reads_.empty() && reads_.front().ready <= next && credit_ >= bus_bytes_;
  } else if (stream) {
    // The budget stays full, the R slice holds one beat, rvalid stays high.
    reads_.front().beats_left -= k;
    counters_.read_beats += k;
  } else {
    credit_ = std::min<int64_t>(credit_ + static_cast<int64_t>(k) * bytes_per_cycle_, credit_cap_);
    rvalid_ = !reads_.empty() && reads_.front().ready <= next && credit_ >= bus_bytes_;
  }
  bvalid_ = !responses_.empty() && responses_.front() <= next;
}

void MemorySystem::update(uint64_t now, int captured, uint32_t captured_beats,
                          const bool r_ready[kNumClients], bool aw_fire, uint32_t aw_beats,
                          bool w_fire) {
  // Handshakes of this cycle, all against this cycle's registers and prepared outputs.
  const bool ar_accept = !ar_slice_.empty() && reads_.size() < max_outstanding_;
  const bool aw_accept = !aw_slice_.empty() && writes_.size() < max_outstanding_;
  const bool r_beat = rvalid_ && !r_slice_.full();
  const bool w_beat = wready_ && w_slice_.count > 0;
  const bool r_pop = !r_slice_.empty() && !order_.empty() && r_ready[order_.front()];
  const bool ar_into_slice = ar_valid_q_ && !ar_slice_.full();

  // vacc_axi_rd_arb: the order FIFO pops when a burst's last beat leaves for its client.
  if (r_pop) {
    if (r_slice_.front()) order_.pop();
    r_slice_.pop();
  }
  // axi_memory.cc clock(): beats, bursts, responses; then the budget refills.
  if (r_beat) {
    credit_ -= bus_bytes_;
    ++counters_.read_beats;
    ReadBurst &b = reads_.front();
    r_slice_.push(b.beats_left == 1);
    if (--b.beats_left == 0) reads_.pop();
  }
  if (w_beat) {
    credit_ -= bus_bytes_;
    ++counters_.write_beats;
    --w_slice_.count;
    if (--writes_.front() == 0) {
      responses_.push_back(now + latency_);
      writes_.pop();
    }
  }
  if (bvalid_) responses_.pop_front();  // bready is always high
  b_valid_q_ = bvalid_;
  if (ar_accept) {
    reads_.push({ar_slice_.front(), now + 1 + latency_});
    ar_slice_.pop();
    ++counters_.read_bursts;
  }
  if (aw_accept) {
    writes_.push(aw_slice_.front());
    aw_slice_.pop();
    ++counters_.write_bursts;
  }
  credit_ = std::min(credit_ + bytes_per_cycle_, credit_cap_);
  const uint64_t next = now + 1;
  rvalid_ = !reads_.empty() && reads_.front().ready <= next && credit_ >= bus_bytes_;
  wready_ = !writes_.empty() && credit_ >= bus_bytes_;
  bvalid_ = !responses_.empty() && responses_.front() <= next;

  // The register slices take what the master offered.
  if (ar_into_slice) ar_slice_.push(ar_beats_q_);
  if (aw_fire) aw_slice_.push(aw_beats);
  if (w_fire) ++w_slice_.count;
  // vacc_axi_rd_arb's registered stage.
  ar_valid_q_ = ar_valid_q_ && !ar_into_slice;
  if (captured >= 0) {
    ar_valid_q_ = true;
    ar_beats_q_ = captured_beats;
    rr_ = (captured + 1) % kNumClients;
    order_.push(static_cast<uint8_t>(captured));
  }
}

}  // namespace vacc::sim::perf
