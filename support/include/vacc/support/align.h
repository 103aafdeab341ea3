// Rounding offsets and sizes up to an alignment.
#pragma once

#include <cstdint>

namespace vacc {

// The least multiple of `a` (> 0) at or above `v`.
constexpr uint64_t align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace vacc
