// The device memory seen by the RTL's AXI4 master: a byte array at a base address, with the
// config's DRAM timing. It is plain C++ evaluated once per clock cycle by the thread that owns
// the Verilated model (no SystemC signals on this path: it is the hot loop).
//
// Timing model (memory.latency_cycles = L, memory.bytes_per_cycle = B):
//  - up to `max_outstanding` read bursts and as many write bursts are accepted; reads
//    return data in request order, the first beat of a burst no earlier than L cycles
//    after its address was accepted;
//  - reads and writes share one bandwidth budget of B bytes per cycle (a beat of the full
//    bus width costs bus_bytes), so a narrow B throttles both directions;
//  - a write burst's response comes L cycles after its last data beat.
// INCR and FIXED bursts of any size up to the bus width are supported; lanes follow the
// AXI rules (a beat carries the aligned bus word that contains its address).
// An access outside [base, base + size) returns SLVERR, reads as zero, writes nothing, and is
// remembered so the simulator can report it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace vacc::sim {

struct AxiMemoryTiming {
  int bus_bytes = 8;
  int latency_cycles = 64;
  int bytes_per_cycle = 8;
  int max_outstanding = 8;  // read bursts and write bursts in flight, each
};

// What the master drives in one cycle, sampled before the clock edge.
struct AxiMasterSample {
  bool arvalid = false;
  uint64_t araddr = 0;
  uint32_t arlen = 0;
  uint32_t arsize = 0;
  uint32_t arburst = 1;
  bool rready = false;
  bool awvalid = false;
  uint64_t awaddr = 0;
  uint32_t awlen = 0;
  uint32_t awsize = 0;
  uint32_t awburst = 1;
  bool wvalid = false;
  const uint8_t *wdata = nullptr;  // bus_bytes bytes, little-endian lanes
  uint64_t wstrb = 0;              // one bit per lane (bus_bytes <= 64)
  bool wlast = false;
  bool bready = false;
};

struct AxiMemoryStats {
  uint64_t read_bursts = 0;
  uint64_t write_bursts = 0;
  uint64_t read_beats = 0;
  uint64_t write_beats = 0;
  uint64_t read_bytes = 0;   // bytes of the beats (bus width x beats)
  uint64_t write_bytes = 0;  // bytes enabled by wstrb
};

class AxiMemory {
 public:
  explicit AxiMemory(const AxiMemoryTiming &timing);

  // The memory array: device addresses [base, base + bytes.size()).
  void set_base(uint64_t base) { base_ = base; }
  uint64_t base() const { return base_; }
  std::vector<uint8_t> &bytes() { return bytes_; }
  const std::vector<uint8_t> &bytes() const { return bytes_; }

  // Outputs for the current cycle (stable until clock()).
  bool arready() const { return reads_.size() < max_outstanding_; }
  bool awready() const { return writes_.size() < max_outstanding_; }
  bool wready() const { return wready_; }
  bool rvalid() const { return rvalid_; }
  bool rlast() const { return rlast_; }
  uint32_t rresp() const { return rresp_; }
  const uint8_t *rdata() const { return rbuf_.data(); }
  bool bvalid() const { return bvalid_; }
  uint32_t bresp() const { return bresp_; }

  // Advances one clock edge: performs the handshakes of `s` against the outputs above and
  // computes the outputs of the next cycle.
  void clock(const AxiMasterSample &s);

  // True when no burst is in flight (nothing accepted and not yet answered).
  bool idle() const { return reads_.empty() && writes_.empty() && responses_.empty(); }
  // Drops everything in flight (after the RTL was stopped mid-transfer).
  void abort_in_flight();

  uint64_t cycle() const { return now_; }
  const AxiMemoryStats &stats() const { return stats_; }
  // The first out-of-range access, "" if none.
  const std::string &first_error() const { return first_error_; }

 private:
  struct Burst {
    uint64_t addr = 0;
    uint32_t beats_left = 0;
    uint32_t size_bytes = 0;
    bool incr = true;
    uint64_t ready_cycle = 0;  // reads: first beat not before; unused for writes
    bool error = false;
  };
  struct Response {
    uint64_t ready_cycle = 0;
    uint32_t resp = 0;
  };

  bool in_range(uint64_t addr, uint64_t size) const;
  void note_error(const char *what, uint64_t addr, uint64_t size);
  void prepare_outputs();
  void fill_read_beat(const Burst &burst);
  static void advance(Burst &burst);

  AxiMemoryTiming timing_;
  size_t max_outstanding_;
  uint64_t base_ = 0;
  std::vector<uint8_t> bytes_;

  std::deque<Burst> reads_;      // accepted read bursts, in order
  std::deque<Burst> writes_;     // accepted write bursts waiting for data, in order
  std::deque<Response> responses_;  // write responses, in order
  int64_t credit_ = 0;           // bandwidth budget in bytes
  int64_t credit_cap_ = 0;
  uint64_t now_ = 0;

  bool rvalid_ = false;
  bool rlast_ = false;
  uint32_t rresp_ = 0;
  bool wready_ = false;
  bool bvalid_ = false;
  uint32_t bresp_ = 0;
  std::vector<uint8_t> rbuf_;

  AxiMemoryStats stats_;
  std::string first_error_;
};

}  // namespace vacc::sim
