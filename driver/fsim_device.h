// The fsim device: writing the start bit runs the functional simulator over the arena,
// exactly as the RTL would run from the same registers.
#pragma once

#include "vacc/driver/arena_device.h"
#include "vacc/simulator/fsim.h"

namespace vacc::driver {

class FsimDevice : public ArenaDevice {
 public:
  // op_limit, latest_first: sim::FsimOptions' (op_limit 0: none).
  FsimDevice(const isa::HwConfig &config, uint64_t op_limit, bool latest_first = false);

  std::string name() const override { return "fsim"; }
  Counters counters() override;

 protected:
  void execute(std::vector<uint8_t> &memory, uint64_t insn_offset, uint32_t insn_count) override {
    fsim_.run(memory, insn_offset, insn_count);
  }

 private:
  isa::HwConfig config_;
  sim::Fsim fsim_;
};

}  // namespace vacc::driver
