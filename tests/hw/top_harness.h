// hw/'s own tests drive a verilated vacc_top through the simulator's harness: RtlCore (clock,
// reset, the host's AXI4-Lite transactions, simulator/rtl/rtl_core.h) and AxiMemory (the
// device memory behind the AXI4 master), the code `vacc sim --engine rtl` runs. TopHarness only
// adds what a test needs around them: a register read or write as one call, and a run that
// programs the registers, starts, waits for done and reads the counters back. The model class
// is a template parameter so that one harness serves every config's model (and the netlist).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "rtl_core.h"
#include "vacc/simulator/axi_memory.h"

namespace vacc::test {

struct HarnessResult {
  uint32_t control = 0;
  uint32_t error_status = 0;
  uint32_t error_insn = 0;
  uint64_t cycles = 0;
  uint32_t gemm_busy = 0;
  uint32_t counters[7] = {};  // 0x30..0x48
};

// Bytes of a Verilator port (a reference to CData..QData, or to VlWide<N>, N 32-bit words).
// Bus widths are powers of two of at least 8 bits, so a bus fills its type exactly.
template <typename Port>
constexpr int signal_bytes_of() {
  return static_cast<int>(sizeof(std::remove_cvref_t<Port>));
}

template <typename Top>
class TopHarness {
 public:
  static constexpr int kBusBytes = signal_bytes_of<decltype(Top::m_axi_gmem_rdata)>();

  // `latency`: cycles from a read's address to its first beat (and from a write's last beat to
  // its response); the bandwidth is a full bus beat per cycle.
  TopHarness(size_t mem_bytes, int latency, int max_outstanding = 8)
      : memory_(sim::AxiMemoryTiming{kBusBytes, latency, kBusBytes, max_outstanding}),
        core_(memory_, kBusBytes),
        mem(memory_.bytes()) {
    mem.assign(mem_bytes, 0);
    core_.reset();
  }

  void write_reg(uint32_t addr, uint32_t data) {
    sim::LiteTransaction txn;
    txn.write = true;
    txn.addr = addr;
    txn.data = data;
    transact(txn);
  }

  uint32_t read_reg(uint32_t addr) {
    sim::LiteTransaction txn;
    txn.addr = addr;
    transact(txn);
    return txn.data;
  }

  // Starts a run and waits for done (or max_cycles cycles).
  HarnessResult run(uint64_t base, uint64_t insn_offset, uint32_t insn_count,
                    uint32_t cycle_limit, uint64_t max_cycles) {
    write_reg(0x10, insn_count);
    write_reg(0x18, static_cast<uint32_t>(base));
    write_reg(0x1C, static_cast<uint32_t>(base >> 32));
    write_reg(0x20, static_cast<uint32_t>(insn_offset));
    write_reg(0x54, cycle_limit);
    const uint64_t t0 = core_.cycle();
    write_reg(0x00, 1);
    HarnessResult r;
    while (true) {
      core_.run(32);
      r.control = read_reg(0x00);
      if (r.control & 2) break;
      if (core_.cycle() - t0 > max_cycles) throw std::runtime_error("vacc_top did not finish");
    }
    if (!memory_.first_error().empty()) throw std::runtime_error(memory_.first_error());
    r.error_status = read_reg(0x4C);
    r.error_insn = read_reg(0x50);
    r.cycles = read_reg(0x28) | (uint64_t{read_reg(0x2C)} << 32);
    for (int i = 0; i < 7; ++i) r.counters[i] = read_reg(0x30 + 4 * i);
    r.gemm_busy = r.counters[6];
    return r;
  }

 private:
  void transact(sim::LiteTransaction &txn) {
    core_.begin_transaction(&txn);
    core_.run(1000);
    if (!txn.done) throw std::runtime_error("AXI4-Lite handshake timed out");
  }

  sim::AxiMemory memory_;
  sim::RtlCore<Top> core_;

 public:
  std::vector<uint8_t> &mem;  // device memory from address 0
};

}  // namespace vacc::test
