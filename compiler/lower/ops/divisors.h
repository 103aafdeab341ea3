// The tile sizes a default schedule tries along one axis: the divisors of its extent.
#pragma once

#include <cstdint>
#include <vector>

namespace vacc::lower {

inline std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

}  // namespace vacc::lower
