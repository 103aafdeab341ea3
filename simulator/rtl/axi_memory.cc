#include "vacc/simulator/axi_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "vacc/support/error.h"

namespace vacc::sim {

AxiMemory::AxiMemory(const AxiMemoryTiming &timing)
    : timing_(timing),
      max_outstanding_(static_cast<size_t>(std::max(1, timing.max_outstanding))),
      rbuf_(static_cast<size_t>(timing.bus_bytes), 0) {
  VACC_CHECK(timing.bus_bytes >= 1 && timing.bus_bytes <= 64) << "bus of " << timing.bus_bytes;
  VACC_CHECK(timing.bytes_per_cycle >= 1 && timing.latency_cycles >= 0);
  credit_cap_ = std::max(timing.bus_bytes, timing.bytes_per_cycle);
  credit_ = credit_cap_;
  prepare_outputs();
}

bool AxiMemory::in_range(uint64_t addr, uint64_t size) const {
  return addr >= base_ && addr - base_ <= bytes_.size() && size <= bytes_.size() - (addr - base_);
}

void AxiMemory::note_error(const char *what, uint64_t addr, uint64_t size) {
  if (!first_error_.empty()) return;
  first_error_ = fmt::format(
      "the accelerator {} {} bytes at device address {:#x}, outside device memory "
      "[{:#x}, {:#x})",
      what, size, addr, base_, base_ + bytes_.size());
}

void AxiMemory::advance(Burst &burst) {
  if (burst.incr) burst.addr = (burst.addr & ~uint64_t{burst.size_bytes - 1}) + burst.size_bytes;
  --burst.beats_left;
}

void AxiMemory::fill_read_beat(const Burst &burst) {
  const uint64_t bus = static_cast<uint64_t>(timing_.bus_bytes);
  const uint64_t word = burst.addr & ~(bus - 1);
  if (!burst.error && in_range(word, bus)) {
    std::memcpy(rbuf_.data(), bytes_.data() + (word - base_), bus);
    rresp_ = 0;
  } else {
    std::fill(rbuf_.begin(), rbuf_.end(), 0);
    rresp_ = 2;  // SLVERR
  }
}

void AxiMemory::prepare_outputs() {
  const int64_t beat = timing_.bus_bytes;
  rvalid_ = false;
  rlast_ = false;
  if (!reads_.empty() && reads_.front().ready_cycle <= now_ && credit_ >= beat) {
    rvalid_ = true;
    rlast_ = reads_.front().beats_left == 1;
    fill_read_beat(reads_.front());
  }
  wready_ = !writes_.empty() && credit_ >= beat;
  bvalid_ = !responses_.empty() && responses_.front().ready_cycle <= now_;
  bresp_ = bvalid_ ? responses_.front().resp : 0;
}

void AxiMemory::clock(const AxiMasterSample &s) {
  const uint64_t bus = static_cast<uint64_t>(timing_.bus_bytes);
  // Handshakes of this cycle, against the outputs computed at the end of the last one. The
  // ready signals the master saw are taken before any state changes: a burst that completes
  // in this cycle frees its slot only from the next cycle on (otherwise an AR or AW offered
  // while arready/awready was low would be accepted without the master knowing).
  const bool ar_accept = s.arvalid && arready();
  const bool aw_accept = s.awvalid && awready();
  if (rvalid_ && s.rready) {
    Burst &burst = reads_.front();
    ++stats_.read_beats;
    stats_.read_bytes += bus;
    credit_ -= static_cast<int64_t>(bus);
    advance(burst);
    if (burst.beats_left == 0) reads_.pop_front();
  }
  if (wready_ && s.wvalid) {
    Burst &burst = writes_.front();
    const uint64_t word = burst.addr & ~(bus - 1);
    if (!burst.error && in_range(word, bus)) {
      uint8_t *dst = bytes_.data() + (word - base_);
      for (uint64_t lane = 0; lane < bus; ++lane) {
        if ((s.wstrb >> lane) & 1) {
          dst[lane] = s.wdata[lane];
          ++stats_.write_bytes;
        }
      }
    }
    ++stats_.write_beats;
    credit_ -= static_cast<int64_t>(bus);
    const bool last = burst.beats_left == 1;
    if (last != s.wlast && first_error_.empty()) {
      first_error_ = fmt::format(
          "AXI protocol error: WLAST was {} on a write beat to {:#x} with {} beats left in its "
          "burst",
          s.wlast ? "set" : "clear", burst.addr, burst.beats_left);
    }
    advance(burst);
    if (burst.beats_left == 0) {
      responses_.push_back(
          {now_ + static_cast<uint64_t>(timing_.latency_cycles), burst.error ? 2u : 0u});
      writes_.pop_front();
    }
  }
  if (bvalid_ && s.bready) responses_.pop_front();
  if (ar_accept) {
    Burst burst;
    burst.addr = s.araddr;
    burst.beats_left = s.arlen + 1;
    burst.size_bytes = 1u << s.arsize;
    burst.incr = s.arburst != 0;
    burst.ready_cycle = now_ + 1 + static_cast<uint64_t>(timing_.latency_cycles);
    const uint64_t span = burst.incr ? uint64_t{burst.beats_left} * burst.size_bytes : bus;
    if (burst.size_bytes > bus || !in_range(burst.addr & ~(bus - 1), span)) {
      burst.error = true;
      note_error("read", burst.addr, span);
    }
    ++stats_.read_bursts;
    reads_.push_back(burst);
  }
  if (aw_accept) {
    Burst burst;
    burst.addr = s.awaddr;
    burst.beats_left = s.awlen + 1;
    burst.size_bytes = 1u << s.awsize;
    burst.incr = s.awburst != 0;
    const uint64_t span = burst.incr ? uint64_t{burst.beats_left} * burst.size_bytes : bus;
    if (burst.size_bytes > bus || !in_range(burst.addr & ~(bus - 1), span)) {
      burst.error = true;
      note_error("wrote", burst.addr, span);
    }
    ++stats_.write_bursts;
    writes_.push_back(burst);
  }
  ++now_;
  credit_ = std::min(credit_ + timing_.bytes_per_cycle, credit_cap_);
  prepare_outputs();
}

void AxiMemory::abort_in_flight() {
  reads_.clear();
  writes_.clear();
  responses_.clear();
  prepare_outputs();
}

}  // namespace vacc::sim
