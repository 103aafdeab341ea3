// A fixed-capacity FIFO for the timing model's queues (the RTL's vacc_fifo and its relatives):
// no allocation on the per-cycle path.
#pragma once

#include <array>
#include <cstdint>

#include "vacc/support/error.h"

namespace vacc::sim::perf {

template <typename T, uint32_t Capacity>
class Ring {
 public:
  uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  bool full() const { return count_ == Capacity; }
  const T &front() const { return items_[head_]; }
  T &front() { return items_[head_]; }
  const T &at(uint32_t i) const { return items_[(head_ + i) % Capacity]; }
  T &at(uint32_t i) { return items_[(head_ + i) % Capacity]; }
  void push(const T &v) {
    VACC_CHECK(count_ < Capacity) << "timing model: push into a full queue";
    items_[(head_ + count_) % Capacity] = v;
    ++count_;
  }
  void pop() {
    VACC_CHECK(count_ > 0) << "timing model: pop from an empty queue";
    head_ = (head_ + 1) % Capacity;
    --count_;
  }
  void clear() { head_ = count_ = 0; }

 private:
  std::array<T, Capacity> items_{};
  uint32_t head_ = 0, count_ = 0;
};

}  // namespace vacc::sim::perf
