// The rtl device: the cycle-accurate simulator (simulator/rtl) behind the Device interface.
// Registers are real AXI4-Lite transactions on the Verilated RTL and wait() polls the control
// register like a host, so run_program() drives it exactly as it drives a board.
#pragma once

#include <memory>
#include <string>

#include "vacc/driver/device.h"
#include "vacc/simulator/rtl_sim.h"

namespace vacc::driver {

class RtlDevice : public Device {
 public:
  // `options`: cycle limit, waveform and timeline paths (vacc sim --cycle-limit, --wave,
  // --timeline), building a model on demand. Throws vacc::Error when there is no RTL model
  // for `config` and none may or can be built.
  explicit RtlDevice(const isa::HwConfig &config, sim::RtlOptions options = {});

  std::string name() const override { return "rtl"; }
  uint64_t allocate(uint64_t bytes) override { return sim_.allocate(bytes); }
  void write_memory(uint64_t address, const uint8_t *data, uint64_t bytes) override {
    sim_.write_memory(address, data, bytes);
  }
  void read_memory(uint64_t address, uint8_t *data, uint64_t bytes) override {
    sim_.read_memory(address, data, bytes);
  }
  void write_register(uint32_t offset, uint32_t value) override {
    sim_.write_register(offset, value);
  }
  uint32_t read_register(uint32_t offset) override { return sim_.read_register(offset); }
  void wait(double timeout_seconds) override { sim_.wait(timeout_seconds); }
  Counters counters() override;
  bool record_spans(bool on) override;
  std::vector<InsnSpan> spans() override;

  sim::RtlSim &sim() { return sim_; }

 private:
  sim::RtlSim sim_;
};

}  // namespace vacc::driver
