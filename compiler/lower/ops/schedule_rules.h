// The rules every operator's check_schedule (schedule_space.h) shares, each returning the
// broken rule's reason or nullopt.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>

namespace vacc::lower {

// Each (knob, value, extent): the value is a positive divisor of the extent.
inline std::optional<std::string> check_divides(
    std::initializer_list<std::tuple<const char *, int64_t, int64_t>> tiles) {
  for (auto [what, v, extent] : tiles)
    if (v < 1 || extent % v)
      return fmt::format("{} = {} does not divide its extent {}", what, v, extent);
  return std::nullopt;
}

// Virtual threads a schedule may interleave: each takes 1/V of every scratchpad.
constexpr int64_t kMaxVirtualThreads = 4;

// 1 to kMaxVirtualThreads virtual threads, and `tiles` tiles along the axis they split.
inline std::optional<std::string> check_threads(int64_t vthreads, int64_t tiles,
                                                const char *axis) {
  if (vthreads < 1 || vthreads > kMaxVirtualThreads)
    return fmt::format("vthreads = {} must be 1 to {}", vthreads, kMaxVirtualThreads);
  if (tiles % vthreads)
    return fmt::format("the {} {} tiles do not split between {} threads", tiles, axis, vthreads);
  return std::nullopt;
}

// `need` tiles of scratchpad `pad` per thread, of which `cap` fit.
inline std::optional<std::string> check_fits(const char *pad, int64_t need, int64_t cap) {
  if (need > cap) return fmt::format("needs {} {} tiles per thread, {} fit", need, pad, cap);
  return std::nullopt;
}

}  // namespace vacc::lower
