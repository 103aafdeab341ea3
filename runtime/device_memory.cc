#include "vacc/runtime/device_memory.h"

#include "vacc/support/error.h"

namespace vacc::runtime {

DeviceMemory::DeviceMemory(uint64_t capacity, uint64_t alignment)
    : capacity_(capacity / alignment * alignment), alignment_(alignment) {
  VACC_CHECK(alignment > 0 && (alignment & (alignment - 1)) == 0) << "alignment " << alignment;
  if (capacity_ > 0) free_[0] = capacity_;
}

DeviceBuffer DeviceMemory::allocate(uint64_t bytes, const std::string &what) {
  const uint64_t size = std::max<uint64_t>(alignment_, (bytes + alignment_ - 1) / alignment_ * alignment_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < size) continue;
    const uint64_t offset = it->first, rest = it->second - size;
    free_.erase(it);
    if (rest) free_[offset + size] = rest;
    used_ += size;
    high_water_ = std::max(high_water_, offset + size);
    return DeviceBuffer{offset, bytes};
  }
  fail("device memory is full: cannot allocate {} bytes for {} ({} of {} bytes in use); give the "
       "runtime a larger device memory",
       bytes, what, used_, capacity_);
}

void DeviceMemory::release(const DeviceBuffer &buffer) {
  const uint64_t size =
      std::max<uint64_t>(alignment_, (buffer.bytes + alignment_ - 1) / alignment_ * alignment_);
  VACC_CHECK(buffer.offset + size <= capacity_) << "buffer outside device memory";
  auto next = free_.lower_bound(buffer.offset);
  VACC_CHECK(next == free_.end() || next->first >= buffer.offset + size) << "double release";
  uint64_t offset = buffer.offset, length = size;
  if (next != free_.end() && next->first == offset + length) {  // merge with the next hole
    length += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {  // merge with the previous hole
    auto prev = std::prev(next);
    VACC_CHECK(prev->first + prev->second <= offset) << "double release";
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      length += prev->second;
      free_.erase(prev);
    }
  }
  free_[offset] = length;
  used_ -= size;
}

}  // namespace vacc::runtime
