// The fsim device: device memory is a host vector, and writing the start bit runs the
// functional simulator over it, exactly as the RTL would run from the same registers.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vacc/driver/device.h"
#include "vacc/simulator/fsim.h"

namespace vacc::driver {

class FsimDevice : public Device {
 public:
  explicit FsimDevice(const isa::HwConfig &config);

  std::string name() const override { return "fsim"; }
  uint64_t allocate(uint64_t bytes) override;
  void write_memory(uint64_t address, const uint8_t *data, uint64_t bytes) override;
  void read_memory(uint64_t address, uint8_t *data, uint64_t bytes) override;
  void write_register(uint32_t offset, uint32_t value) override;
  uint32_t read_register(uint32_t offset) override;
  void wait(double timeout_seconds) override;
  Counters counters() override;

 private:
  void check_range(uint64_t address, uint64_t bytes) const;
  void start();

  isa::HwConfig config_;
  sim::Fsim fsim_;
  // The arena starts at a non-zero device address so that a zero base is never valid.
  static constexpr uint64_t kArenaBase = 0x1000'0000;
  std::vector<uint8_t> memory_;
  std::map<uint32_t, uint32_t> registers_;
  bool done_ = false;
  std::optional<std::string> error_;
};

}  // namespace vacc::driver
