// RtlCore<V>: drives one Verilated `vacc_top` (class V, verilated in plain C++ mode) cycle by
// cycle: the clock, the reset, the host's AXI4-Lite transactions and the AXI4 device memory
// (AxiMemory), all in C++ without SystemC signals. Included only by the generated
// model_<hash>.cc of each config, after the model's headers.
//
// Per cycle: drive the memory's and the host's outputs, evaluate with the clock low
// (combinational settle, so a ready that depends on a valid is seen), sample every handshake,
// evaluate the rising edge, then clock the memory model. Two eval() calls per cycle.
#pragma once

#include <verilated.h>
#include <verilated_fst_c.h>

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "rtl_model.h"
#include "vacc/support/error.h"

namespace vacc::sim {

// Bytes <-> Verilator signal values of any width (CData..QData, VlWide<N>).
template <typename T>
inline void put_bytes(T &signal, const uint8_t *bytes, int n) {
  if constexpr (std::is_integral_v<T>) {
    uint64_t v = 0;
    std::memcpy(&v, bytes, static_cast<size_t>(n));
    signal = static_cast<T>(v);
  } else {
    for (int w = 0; w * 4 < n; ++w) {
      uint32_t v = 0;
      std::memcpy(&v, bytes + w * 4, 4);
      signal[w] = v;
    }
  }
}

template <typename T>
inline const uint8_t *signal_bytes(const T &signal, uint8_t *scratch, int n) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t v = signal;
    std::memcpy(scratch, &v, static_cast<size_t>(n));
  } else {
    for (int w = 0; w * 4 < n; ++w) {
      const uint32_t v = signal[w];
      std::memcpy(scratch + w * 4, &v, 4);
    }
  }
  return scratch;
}

template <typename T>
inline uint64_t signal_u64(const T &signal) {
  if constexpr (std::is_integral_v<T>) {
    return signal;
  } else {
    return uint64_t{signal[0]} | (uint64_t{signal[1]} << 32);
  }
}

// The RTL's per-instruction trace signals (hw/README.md): bit e of trace_insn_start /
// trace_insn_end pulses for one cycle when engine e starts / ends an instruction.
template <typename V>
concept HasInsnEvents = requires(V &m) {
  m.rootp->vacc_top__DOT__trace_insn_start;
  m.rootp->vacc_top__DOT__trace_insn_end;
};

// trace_unit_start / trace_unit_end: bit u pulses when the compute engine's unit u (0 GEMM,
// 1 ALU) takes an instruction / writes back its last micro-op.
template <typename V>
concept HasUnitEvents = requires(V &m) {
  m.rootp->vacc_top__DOT__trace_unit_start;
  m.rootp->vacc_top__DOT__trace_unit_end;
};

// trace_gemm_mac: high in each cycle an accumulating micro-op enters the GEMM core;
// trace_run_start: pulses in the cycle a run starts.
template <typename V>
concept HasMacTrace = requires(V &m) {
  m.rootp->vacc_top__DOT__trace_gemm_mac;
};
template <typename V>
concept HasRunStartTrace = requires(V &m) {
  m.rootp->vacc_top__DOT__trace_run_start;
};

template <typename V>
class RtlCore final : public RtlModel {
 public:
  // `bus_bytes` is the config's memory.bus_bits / 8 (the width of m_axi_gmem_*data).
  RtlCore(AxiMemory &memory, int bus_bytes)
      : context_(std::make_unique<VerilatedContext>()), memory_(memory), bus_bytes_(bus_bytes) {
    VACC_CHECK(bus_bytes >= 1 && bus_bytes <= 64) << "bus of " << bus_bytes << " bytes";
    context_->traceEverOn(true);
    Verilated::threadContextp(context_.get());
    model_ = std::make_unique<V>(context_.get(), "vacc_top");
    idle_lite();
  }
  ~RtlCore() override {
    // Verilator erases a model's scopes from the thread's current context, which may be
    // another (already destroyed) model's: make it this model's own first.
    Verilated::threadContextp(context_.get());
    close_wave();
    model_->final();
    model_.reset();
    Verilated::threadContextp(nullptr);
  }

  void reset() override {
    V &m = *model_;
    m.ap_rst_n = 0;
    for (int i = 0; i < 8; ++i) {
      m.ap_clk = 0;
      m.eval();
      m.ap_clk = 1;
      m.eval();
    }
    m.ap_rst_n = 1;
    m.ap_clk = 0;
    m.eval();
  }

  void begin_transaction(LiteTransaction *txn) override {
    txn_ = txn;
    txn->done = false;
    V &m = *model_;
    if (txn->write) {
      aw_pending_ = w_pending_ = true;
      m.s_axi_control_awaddr = txn->addr;
      m.s_axi_control_wdata = txn->data;
    } else {
      ar_pending_ = true;
      m.s_axi_control_araddr = txn->addr;
    }
  }

  uint64_t run(uint64_t max_cycles) override {
    Verilated::threadContextp(context_.get());
    V &m = *model_;
    for (uint64_t n = 0; n < max_cycles; ++n) {
      // Outputs of the memory and the host for this cycle.
      m.m_axi_gmem_arready = memory_.arready();
      m.m_axi_gmem_awready = memory_.awready();
      m.m_axi_gmem_wready = memory_.wready();
      m.m_axi_gmem_rvalid = memory_.rvalid();
      if (memory_.rvalid()) {
        put_bytes(m.m_axi_gmem_rdata, memory_.rdata(), bus_bytes_);
        m.m_axi_gmem_rlast = memory_.rlast();
        m.m_axi_gmem_rresp = memory_.rresp();
      }
      m.m_axi_gmem_bvalid = memory_.bvalid();
      m.m_axi_gmem_bresp = memory_.bresp();
      m.s_axi_control_awvalid = aw_pending_;
      m.s_axi_control_wvalid = w_pending_;
      m.s_axi_control_arvalid = ar_pending_;

      m.ap_clk = 0;
      m.eval();
      if (wave_) wave_->dump(cycle_ * period_ps_);

      // Sample the master's requests and every handshake of this cycle.
      AxiMasterSample s;
      s.arvalid = m.m_axi_gmem_arvalid;
      if (s.arvalid) {
        s.araddr = m.m_axi_gmem_araddr;
        s.arlen = m.m_axi_gmem_arlen;
        s.arsize = m.m_axi_gmem_arsize;
        s.arburst = m.m_axi_gmem_arburst;
      }
      s.rready = m.m_axi_gmem_rready;
      s.awvalid = m.m_axi_gmem_awvalid;
      if (s.awvalid) {
        s.awaddr = m.m_axi_gmem_awaddr;
        s.awlen = m.m_axi_gmem_awlen;
        s.awsize = m.m_axi_gmem_awsize;
        s.awburst = m.m_axi_gmem_awburst;
      }
      s.wvalid = m.m_axi_gmem_wvalid;
      if (s.wvalid) {
        s.wdata = signal_bytes(m.m_axi_gmem_wdata, wdata_scratch_, bus_bytes_);
        s.wstrb = signal_u64(m.m_axi_gmem_wstrb);
        s.wlast = m.m_axi_gmem_wlast;
      }
      s.bready = m.m_axi_gmem_bready;
      const bool lite_finished = sample_lite(m);
      sample_events(m);
      if constexpr (HasMacTrace<V>)
        progress_.gemm_mac_uops += m.rootp->vacc_top__DOT__trace_gemm_mac;
      if constexpr (HasRunStartTrace<V>) {
        if (m.rootp->vacc_top__DOT__trace_run_start) {
          progress_.run_started = true;
          progress_.run_start_cycle = cycle_;
        }
      }

      m.ap_clk = 1;
      m.eval();
      if (wave_) wave_->dump(cycle_ * period_ps_ + period_ps_ / 2);
      memory_.clock(s);
      ++cycle_;
      if (lite_finished) return n + 1;
    }
    return max_cycles;
  }

  uint64_t cycle() const override { return cycle_; }
  // `interrupt` is a C++ word, so Verilator names the port __SYM__interrupt.
  bool interrupt() const override { return model_->__SYM__interrupt; }

  void open_wave(const std::string &path, double period_ns) override {
    close_wave();
    period_ps_ = static_cast<uint64_t>(period_ns * 1000.0 + 0.5);
    if (period_ps_ < 2) period_ps_ = 2;
    wave_ = std::make_unique<VerilatedFstC>();
    model_->trace(wave_.get(), 99);
    wave_->open(path.c_str());
  }
  void close_wave() override {
    if (wave_) {
      wave_->close();
      wave_.reset();
    }
  }

  bool has_insn_events() const override { return HasInsnEvents<V>; }
  bool has_unit_events() const override { return HasUnitEvents<V>; }
  bool has_mac_trace() const override { return HasMacTrace<V>; }
  void record_events(std::vector<InsnEvent> *events) override { events_ = events; }
  const EngineProgress &progress() const override { return progress_; }
  void clear_progress() override { progress_ = EngineProgress{}; }

 private:
  void idle_lite() {
    V &m = *model_;
    m.s_axi_control_awvalid = 0;
    m.s_axi_control_wvalid = 0;
    m.s_axi_control_arvalid = 0;
    m.s_axi_control_bready = 1;
    m.s_axi_control_rready = 1;
    m.s_axi_control_wstrb = 0xF;
  }

  // Host side of AXI4-Lite; returns true when the current transaction completed this cycle.
  bool sample_lite(V &m) {
    if (txn_ == nullptr) return false;
    if (txn_->write) {
      // B is registered by the slave, so it cannot come in the cycle of the last handshake.
      const bool was_pending = aw_pending_ || w_pending_;
      if (aw_pending_ && m.s_axi_control_awready) aw_pending_ = false;
      if (w_pending_ && m.s_axi_control_wready) w_pending_ = false;
      if (!was_pending && m.s_axi_control_bvalid) {
        txn_->resp = m.s_axi_control_bresp;
        return finish_lite();
      }
    } else {
      if (ar_pending_ && m.s_axi_control_arready) {
        ar_pending_ = false;
      } else if (!ar_pending_ && m.s_axi_control_rvalid) {
        txn_->data = m.s_axi_control_rdata;
        txn_->resp = m.s_axi_control_rresp;
        return finish_lite();
      }
    }
    return false;
  }
  bool finish_lite() {
    txn_->done = true;
    txn_ = nullptr;
    return true;
  }

  void sample_events(V &m) {
    if constexpr (HasInsnEvents<V>)
      record_pulses(m.rootp->vacc_top__DOT__trace_insn_start,
                    m.rootp->vacc_top__DOT__trace_insn_end, 0, 3, /*engines=*/true);
    // Only the timeline needs the units' events.
    if constexpr (HasUnitEvents<V>)
      if (events_ != nullptr)
        record_pulses(m.rootp->vacc_top__DOT__trace_unit_start,
                      m.rootp->vacc_top__DOT__trace_unit_end, kGemmUnitTrack, 2,
                      /*engines=*/false);
  }

  // Bit i of start / end: track first + i started / ended an instruction this cycle. Engine
  // tracks also count into progress_ (for deadlock reports).
  void record_pulses(uint32_t start, uint32_t end, int first, int n, bool engines) {
    if ((start | end) == 0) return;
    for (int i = 0; i < n; ++i) {
      const auto track = static_cast<uint8_t>(first + i);
      if ((start >> i) & 1) {
        if (engines) ++progress_.started[i];
        if (events_) events_->push_back({cycle_, track, true});
      }
      if ((end >> i) & 1) {
        if (engines) ++progress_.ended[i];
        if (events_) events_->push_back({cycle_, track, false});
      }
    }
  }

  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<V> model_;
  AxiMemory &memory_;
  int bus_bytes_;
  uint8_t wdata_scratch_[64] = {};
  uint64_t cycle_ = 0;

  LiteTransaction *txn_ = nullptr;
  bool aw_pending_ = false;
  bool w_pending_ = false;
  bool ar_pending_ = false;

  std::unique_ptr<VerilatedFstC> wave_;
  uint64_t period_ps_ = 10000;
  std::vector<InsnEvent> *events_ = nullptr;
  EngineProgress progress_;
};

}  // namespace vacc::sim
