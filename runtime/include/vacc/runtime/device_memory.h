// Device memory of one accelerator run: an arena of fixed size, sub-allocated first-fit.
// Buffers are offsets from the arena base, which is exactly how instructions address DRAM, so
// a recorded instruction stream stays valid wherever the arena is mapped.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace vacc::runtime {

struct DeviceBuffer {
  uint64_t offset = 0;  // bytes from the arena base
  uint64_t bytes = 0;
};

class DeviceMemory {
 public:
  DeviceMemory(uint64_t capacity, uint64_t alignment);

  // Throws vacc::Error naming `what`, its size and the free space when it does not fit.
  DeviceBuffer allocate(uint64_t bytes, const std::string &what);
  void release(const DeviceBuffer &buffer);

  uint64_t capacity() const { return capacity_; }
  uint64_t used() const { return used_; }
  uint64_t high_water() const { return high_water_; }  // end of the highest byte ever allocated

 private:
  uint64_t capacity_;
  uint64_t alignment_;
  uint64_t used_ = 0;
  uint64_t high_water_ = 0;
  std::map<uint64_t, uint64_t> free_;  // offset -> bytes, coalesced
};

}  // namespace vacc::runtime
