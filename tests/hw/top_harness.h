// A minimal C++ (no SystemC) harness around a verilated vacc_top, for hw/'s own tests: drives
// the AXI4-Lite registers like a host and serves the AXI4 master from a byte array with a
// fixed latency and several outstanding reads, returning data in request order. The model
// class is a template parameter so that one harness serves every config's model.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <verilated.h>

namespace vacc::test {

struct HarnessResult {
  uint32_t control = 0;
  uint32_t error_status = 0;
  uint32_t error_insn = 0;
  uint64_t cycles = 0;
  uint32_t gemm_busy = 0;
  uint32_t counters[7] = {};  // 0x30..0x48
  uint64_t wall_cycles = 0;   // harness clock cycles from start to done
};

template <typename Top>
class TopHarness {
 public:
  TopHarness(size_t mem_bytes, int latency, int max_outstanding = 8)
      : mem(mem_bytes, 0), latency_(latency), max_outstanding_(max_outstanding) {
    ctx_ = std::make_unique<VerilatedContext>();
    top_ = std::make_unique<Top>(ctx_.get());
    top_->ap_rst_n = 0;
    for (int i = 0; i < 4; ++i) tick();
    top_->ap_rst_n = 1;
    tick();
  }
  ~TopHarness() { top_->final(); }

  std::vector<uint8_t> mem;

  void write_reg(uint32_t addr, uint32_t data) {
    top_->s_axi_control_awvalid = 1;
    top_->s_axi_control_awaddr = addr;
    top_->s_axi_control_wvalid = 1;
    top_->s_axi_control_wdata = data;
    top_->s_axi_control_wstrb = 0xF;
    top_->s_axi_control_bready = 1;
    wait_for([&] { return top_->s_axi_control_awready && top_->s_axi_control_wready; });
    top_->s_axi_control_awvalid = 0;
    top_->s_axi_control_wvalid = 0;
    wait_for([&] { return top_->s_axi_control_bvalid != 0; });
  }

  uint32_t read_reg(uint32_t addr) {
    top_->s_axi_control_arvalid = 1;
    top_->s_axi_control_araddr = addr;
    top_->s_axi_control_rready = 1;
    wait_for([&] { return top_->s_axi_control_arready != 0; });
    top_->s_axi_control_arvalid = 0;
    uint32_t value = 0;
    wait_for([&] {
      value = top_->s_axi_control_rdata;
      return top_->s_axi_control_rvalid != 0;
    });
    return value;
  }

  // Starts a run and waits for done (or max_cycles harness cycles).
  HarnessResult run(uint64_t base, uint64_t insn_offset, uint32_t insn_count,
                    uint32_t cycle_limit, uint64_t max_cycles) {
    write_reg(0x10, insn_count);
    write_reg(0x18, static_cast<uint32_t>(base));
    write_reg(0x1C, static_cast<uint32_t>(base >> 32));
    write_reg(0x20, static_cast<uint32_t>(insn_offset));
    write_reg(0x54, cycle_limit);
    const uint64_t t0 = cycle_;
    write_reg(0x00, 1);
    HarnessResult r;
    while (true) {
      for (int i = 0; i < 32; ++i) tick();
      r.control = read_reg(0x00);
      if (r.control & 2) break;
      if (cycle_ - t0 > max_cycles) throw std::runtime_error("vacc_top did not finish");
    }
    r.wall_cycles = cycle_ - t0;
    r.error_status = read_reg(0x4C);
    r.error_insn = read_reg(0x50);
    r.cycles = read_reg(0x28) | (uint64_t{read_reg(0x2C)} << 32);
    for (int i = 0; i < 7; ++i) r.counters[i] = read_reg(0x30 + 4 * i);
    r.gemm_busy = r.counters[6];
    return r;
  }

  Top &top() { return *top_; }

 private:
  struct Burst {
    uint64_t addr;
    int len;
    int beat = 0;
    uint64_t ready_at;
  };
  static constexpr int kBusBytes = sizeof(decltype(Top::m_axi_gmem_rdata)) >= 8 &&
                                           std::is_integral_v<decltype(Top::m_axi_gmem_rdata)>
                                       ? 8
                                       : 0;

  template <typename T>
  static void set_bus(T &port, const uint8_t *src, int bytes) {
    if constexpr (std::is_integral_v<T>) {
      uint64_t v = 0;
      for (int i = 0; i < bytes; ++i) v |= uint64_t{src[i]} << (8 * i);
      port = static_cast<T>(v);
    } else {
      for (int w = 0; w < bytes / 4; ++w) {
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) v |= uint32_t{src[4 * w + i]} << (8 * i);
        port[w] = v;
      }
    }
  }
  template <typename T>
  static void get_bus(const T &port, uint8_t *dst, int bytes) {
    if constexpr (std::is_integral_v<T>) {
      for (int i = 0; i < bytes; ++i) dst[i] = static_cast<uint8_t>(uint64_t{port} >> (8 * i));
    } else {
      for (int w = 0; w < bytes / 4; ++w)
        for (int i = 0; i < 4; ++i) dst[4 * w + i] = static_cast<uint8_t>(port[w] >> (8 * i));
    }
  }
  template <typename T>
  static uint64_t get_strb(const T &port) {
    if constexpr (std::is_integral_v<T>) return static_cast<uint64_t>(port);
    else return uint64_t{port[0]} | (uint64_t{port[1]} << 32);
  }

  int bus_bytes() const { return 1 << top_->m_axi_gmem_arsize; }

  void check(uint64_t addr, size_t bytes) {
    if (addr + bytes > mem.size()) throw std::runtime_error("vacc_top accessed memory out of range");
  }

  // One clock cycle: drive the memory side, settle, sample handshakes, clock edge.
  void tick() {
    Top &t = *top_;
    t.ap_clk = 0;
    t.eval();
    const int bb = bus_bytes();
    // Memory outputs for this cycle.
    t.m_axi_gmem_arready = reads_.size() < static_cast<size_t>(max_outstanding_);
    t.m_axi_gmem_awready = 1;
    const bool r_ok = !reads_.empty() && reads_.front().ready_at <= cycle_;
    t.m_axi_gmem_rvalid = r_ok;
    if (r_ok) {
      const Burst &b = reads_.front();
      const uint64_t a = (b.addr & ~uint64_t(bb - 1)) + uint64_t(b.beat) * bb;
      check(a, bb);
      set_bus(t.m_axi_gmem_rdata, &mem[a], bb);
      t.m_axi_gmem_rlast = b.beat == b.len;
    } else {
      t.m_axi_gmem_rlast = 0;
    }
    t.m_axi_gmem_rresp = 0;
    t.m_axi_gmem_wready = !writes_.empty();
    t.m_axi_gmem_bvalid = !bresp_.empty() && bresp_.front() <= cycle_;
    t.m_axi_gmem_bresp = 0;
    t.eval();
    // Handshakes.
    const bool ar = t.m_axi_gmem_arvalid && t.m_axi_gmem_arready;
    const uint64_t ar_addr = t.m_axi_gmem_araddr;
    const int ar_len = t.m_axi_gmem_arlen;
    const bool r = t.m_axi_gmem_rvalid && t.m_axi_gmem_rready;
    const bool aw = t.m_axi_gmem_awvalid && t.m_axi_gmem_awready;
    const uint64_t aw_addr = t.m_axi_gmem_awaddr;
    const int aw_len = t.m_axi_gmem_awlen;
    const bool w = t.m_axi_gmem_wvalid && t.m_axi_gmem_wready;
    const bool wlast = t.m_axi_gmem_wlast;
    uint8_t wdata[64];
    uint64_t wstrb = 0;
    if (w) {
      get_bus(t.m_axi_gmem_wdata, wdata, bb);
      wstrb = get_strb(t.m_axi_gmem_wstrb);
    }
    const bool bfire = t.m_axi_gmem_bvalid && t.m_axi_gmem_bready;
    t.ap_clk = 1;
    t.eval();
    // Memory state.
    if (r) {
      Burst &b = reads_.front();
      if (++b.beat > b.len) reads_.pop_front();
    }
    if (ar) reads_.push_back(Burst{ar_addr, ar_len, 0, cycle_ + latency_});
    if (w) {
      Burst &b = writes_.front();
      const uint64_t a = (b.addr & ~uint64_t(bb - 1)) + uint64_t(b.beat) * bb;
      check(a, bb);
      for (int i = 0; i < bb; ++i)
        if ((wstrb >> i) & 1) mem[a + i] = wdata[i];
      if ((b.beat == b.len) != wlast) throw std::runtime_error("wlast does not match awlen");
      if (++b.beat > b.len) {
        writes_.pop_front();
        bresp_.push_back(cycle_ + 2);
      }
    }
    if (aw) writes_.push_back(Burst{aw_addr, aw_len, 0, 0});
    if (bfire) bresp_.pop_front();
    ++cycle_;
  }

  template <typename F>
  void wait_for(F done) {
    for (int i = 0; i < 1000; ++i) {
      top_->ap_clk = 0;
      top_->eval();
      const bool d = done();
      tick();
      if (d) return;
    }
    throw std::runtime_error("AXI4-Lite handshake timed out");
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Top> top_;
  int latency_;
  int max_outstanding_;
  uint64_t cycle_ = 0;
  std::deque<Burst> reads_;
  std::deque<Burst> writes_;
  std::deque<uint64_t> bresp_;
};

}  // namespace vacc::test
