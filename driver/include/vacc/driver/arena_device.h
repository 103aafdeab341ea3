// A device whose memory is a host vector and whose run happens inside the start write: the
// simulators that execute a whole program at once (fsim, perf). Registers are a plain map;
// the control register reports idle and ready, and done after a run (cleared on read, as
// ap_ctrl_hs does); wait() reports the run's error, if any.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vacc/driver/device.h"

namespace vacc::driver {

class ArenaDevice : public Device {
 public:
  uint64_t allocate(uint64_t bytes) override;
  void write_memory(uint64_t address, const uint8_t *data, uint64_t bytes) override;
  void read_memory(uint64_t address, uint8_t *data, uint64_t bytes) override;
  void write_register(uint32_t offset, uint32_t value) override;
  uint32_t read_register(uint32_t offset) override;
  void wait(double timeout_seconds) override;

 protected:
  // Runs `insn_count` instructions at byte `insn_offset` of `memory` (the whole arena);
  // throws vacc::Error on a program error.
  virtual void execute(std::vector<uint8_t> &memory, uint64_t insn_offset, uint32_t insn_count) = 0;

 private:
  void check_range(uint64_t address, uint64_t bytes) const;
  void start();

  // The arena starts at a non-zero device address so that a zero base is never valid.
  static constexpr uint64_t kArenaBase = 0x1000'0000;
  std::vector<uint8_t> memory_;
  std::map<uint32_t, uint32_t> registers_;
  bool done_ = false;
  std::optional<std::string> error_;
};

}  // namespace vacc::driver
