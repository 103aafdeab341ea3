#include "vacc/driver/arena_device.h"

#include "vacc/driver/registers.h"
#include "vacc/support/error.h"

namespace vacc::driver {

uint64_t ArenaDevice::allocate(uint64_t bytes) {
  if (!memory_.empty()) fail("{} device: device memory is already allocated", name());
  memory_.assign(bytes, 0);
  return kArenaBase;
}

void ArenaDevice::check_range(uint64_t address, uint64_t bytes) const {
  if (address < kArenaBase || address - kArenaBase + bytes > memory_.size())
    fail("{} device: access [{:#x}, {:#x}) is outside device memory [{:#x}, {:#x})", name(),
         address, address + bytes, kArenaBase, kArenaBase + memory_.size());
}

void ArenaDevice::write_memory(uint64_t address, const uint8_t *data, uint64_t bytes) {
  check_range(address, bytes);
  std::copy(data, data + bytes, memory_.begin() + (address - kArenaBase));
}

void ArenaDevice::read_memory(uint64_t address, uint8_t *data, uint64_t bytes) {
  check_range(address, bytes);
  std::copy(memory_.begin() + (address - kArenaBase),
            memory_.begin() + (address - kArenaBase + bytes), data);
}

void ArenaDevice::write_register(uint32_t offset, uint32_t value) {
  if (offset == reg::kControl) {
    if (value & reg::kControlStart) start();
    return;
  }
  registers_[offset] = value;
}

uint32_t ArenaDevice::read_register(uint32_t offset) {
  if (offset == reg::kControl) {
    uint32_t v = reg::kControlIdle | reg::kControlReady | (done_ ? reg::kControlDone : 0);
    done_ = false;  // done clears on read, as ap_ctrl_hs does
    return v;
  }
  auto it = registers_.find(offset);
  return it == registers_.end() ? 0 : it->second;
}

void ArenaDevice::start() {
  error_.reset();
  const uint64_t base = (uint64_t{registers_[reg::kBaseHigh]} << 32) | registers_[reg::kBaseLow];
  if (base != kArenaBase)
    fail("{} device: base address {:#x} is not the allocated device memory {:#x}", name(), base,
         kArenaBase);
  try {
    execute(memory_, registers_[reg::kInsnOffset], registers_[reg::kInsnCount]);
  } catch (const Error &e) {
    error_ = e.what();
  }
  done_ = true;
}

void ArenaDevice::wait(double) {
  // The run completed inside start(); report what it found.
  if (error_) fail("{}", *error_);
}

}  // namespace vacc::driver
