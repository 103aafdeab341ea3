// A 64-bit FNV-1a hash, for cache keys and content checks that need no cryptographic strength
// (nothing adversarial chooses the inputs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vacc {

inline constexpr uint64_t kFnv1aSeed = 14695981039346656037ull;

inline uint64_t fnv1a(const uint8_t *data, size_t n, uint64_t h = kFnv1aSeed) {
  for (size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 1099511628211ull;
  }
  return h;
}

inline uint64_t fnv1a(std::string_view text, uint64_t h = kFnv1aSeed) {
  return fnv1a(reinterpret_cast<const uint8_t *>(text.data()), text.size(), h);
}

}  // namespace vacc
