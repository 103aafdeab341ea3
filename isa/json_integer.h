// Integers read from a file's JSON header. nlohmann's get<T>() converts a floating-point value
// with a cast that is undefined behaviour out of range, and narrows silently: a hostile header
// must get neither, so every integer field goes through these.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vacc/support/error.h"

namespace vacc::isa {

// `j` as a T; throws vacc::Error "WHAT: expected an integer in [min, max], found ..." otherwise.
template <typename T>
T json_integer(const nlohmann::json &j, const std::string &what) {
  constexpr auto lo = std::numeric_limits<T>::min();
  constexpr auto hi = std::numeric_limits<T>::max();
  bool ok = false;
  if (j.is_number_unsigned()) {
    ok = j.get<uint64_t>() <= uint64_t(hi);
  } else if (j.is_number_integer()) {
    const int64_t v = j.get<int64_t>();
    ok = v >= 0 ? uint64_t(v) <= uint64_t(hi) : (lo < 0 && v >= int64_t(lo));
  }
  if (!ok) fail("{}: expected an integer in [{}, {}], found {}", what, lo, hi, j.dump());
  return j.is_number_unsigned() ? T(j.get<uint64_t>()) : T(j.get<int64_t>());
}

template <typename T>
std::vector<T> json_integers(const nlohmann::json &j, const std::string &what) {
  if (!j.is_array()) fail("{}: expected an array of integers, found {}", what, j.dump());
  std::vector<T> out;
  for (const auto &v : j) out.push_back(json_integer<T>(v, what));
  return out;
}

}  // namespace vacc::isa
