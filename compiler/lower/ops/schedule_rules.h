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

// Tiles of `tile` elements along an axis of `extent`: the last one is a tail where `tile` does
// not divide the extent.
inline int64_t tile_count(int64_t extent, int64_t tile) { return (extent + tile - 1) / tile; }

// The elements those tiles span: a tail runs as a whole tile (its elements past the extent are
// computed for nothing, neither loaded from nor stored to DRAM), so scratchpads and compute
// count this, not the extent.
inline int64_t tiled_extent(int64_t extent, int64_t tile) {
  return tile_count(extent, tile) * tile;
}

// Each (knob, value, extent): a tile of 1 to `extent` elements.
inline std::optional<std::string> check_tile_sizes(
    std::initializer_list<std::tuple<const char *, int64_t, int64_t>> tiles) {
  for (auto [what, v, extent] : tiles)
    if (v < 1 || v > extent) return fmt::format("{} = {} must be 1 to its extent {}", what, v, extent);
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
