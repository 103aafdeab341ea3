// Test data that checks something: requantization shifts picked from the data, and the value
// output buffers hold before a run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace vacc::test {

// The smallest right shift after which at most one in 50 of `acc` falls outside the signed
// `bits`-bit range. Random test data with a fixed shift drives most outputs to the clip
// bounds, where a wrong accumulator or shift goes unseen; a shift picked from the data keeps
// nearly every output inside the range, so each one checks the arithmetic.
inline int fitting_shift(const std::vector<int64_t> &acc, int bits) {
  std::vector<int64_t> magnitude(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) magnitude[i] = acc[i] < 0 ? -acc[i] - 1 : acc[i];
  if (magnitude.empty()) return 0;
  const size_t at = magnitude.size() - 1 - magnitude.size() / 50;
  std::nth_element(magnitude.begin(), magnitude.begin() + at, magnitude.end());
  const int64_t hi = (int64_t{1} << (bits - 1)) - 1;
  int shift = 0;
  while ((magnitude[at] >> shift) > hi) ++shift;
  return shift;
}

// What output buffers hold before a run, so that an output the code never writes is seen.
inline constexpr int64_t kPoison = 99;

}  // namespace vacc::test
