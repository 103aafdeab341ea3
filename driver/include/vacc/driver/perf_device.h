// The perf device: writing the start bit runs fsim and the timing model of the RTL over the
// arena (simulator/perf); counters are the RTL's and fsim's, as the model counts them.
#pragma once

#include "vacc/driver/arena_device.h"
#include "vacc/simulator/perf_sim.h"

namespace vacc::driver {

class PerfDevice : public ArenaDevice {
 public:
  PerfDevice(const isa::HwConfig &config, sim::PerfOptions options);

  std::string name() const override { return "perf"; }
  Counters counters() override { return sim_.counters(); }
  bool record_spans(bool on) override;
  std::vector<InsnSpan> spans() override;
  sim::PerfSim &sim() { return sim_; }

 protected:
  void execute(std::vector<uint8_t> &memory, uint64_t insn_offset, uint32_t insn_count) override {
    sim_.run(memory, insn_offset, insn_count);
  }

 private:
  isa::HwConfig config_;
  sim::PerfSim sim_;
};

}  // namespace vacc::driver
