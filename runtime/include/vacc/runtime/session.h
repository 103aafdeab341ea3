// A session runs recorded command streams on one device: it owns the device memory arena,
// the micro-op pool, and the host protocol of the driver. Writes and reads go to the device
// as they are made, so a run moves only what the host changes (an operand, the stream's
// micro-ops and instructions) and reads only what it asks for: constants uploaded once stay
// on the device. The runtime never links the compiler.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vacc/driver/device.h"
#include "vacc/isa/config.h"
#include "vacc/runtime/command_queue.h"
#include "vacc/runtime/device_memory.h"

namespace vacc::runtime {

class Session {
 public:
  // Allocates `arena_bytes` of device memory on `device` and reserves room for
  // `uop_pool_capacity` micro-ops and `max_insns` instructions in it.
  Session(driver::Device &device, const isa::HwConfig &config, uint64_t arena_bytes,
          uint64_t uop_pool_capacity = 1 << 16, uint64_t max_insns = 1 << 16);

  const isa::HwConfig &config() const { return config_; }
  DeviceMemory &memory() { return memory_; }

  DeviceBuffer allocate(uint64_t bytes, const std::string &what);
  void write(const DeviceBuffer &buffer, const void *data, uint64_t bytes, uint64_t offset = 0);
  void read(const DeviceBuffer &buffer, void *data, uint64_t bytes, uint64_t offset = 0) const;
  // The element index of a buffer for memory kind `mem` (what DMA commands take).
  uint64_t element_of(const DeviceBuffer &buffer, isa::MemId mem) const;

  // A fresh queue whose micro-op kernels land in this session's pool.
  CommandQueue queue() const;
  // Finishes `queue`, runs its stream, waits, and returns the device's counters.
  // `step_starts`, when given: the program index of each step's first instruction
  // (CommandQueue::begin_step()).
  driver::Counters run(CommandQueue &queue, double timeout_seconds = 600,
                       std::vector<size_t> *step_starts = nullptr);

 private:
  driver::Device &device_;
  isa::HwConfig config_;
  uint64_t base_;  // device address of the arena
  DeviceMemory memory_;
  DeviceBuffer uop_pool_;
  DeviceBuffer insns_;
};

}  // namespace vacc::runtime
