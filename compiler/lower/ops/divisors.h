// Tile sizes along one axis: the divisors a default schedule tries, and the sizes a schedule
// space offers (tails included).
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

// For each number of tiles k, the smallest tile that makes k tiles: ceil(n / k), ascending.
// Every divisor is one; any other size makes as many tiles as one of these with a longer tail
// (more work for nothing), so the space leaves it out.
inline std::vector<int64_t> tile_sizes(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t k = n; k >= 1; --k) {
    const int64_t t = (n + k - 1) / k;
    if (d.empty() || d.back() != t) d.push_back(t);
  }
  return d;
}

}  // namespace vacc::lower
