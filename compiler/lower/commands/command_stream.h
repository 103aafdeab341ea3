// A command stream under reordering: the commands with their scratchpad footprints
// (footprint.h), kept side by side as commands move, for the passes that reorder a stream
// without tokens (stagger_threads, order_compute_dispatch). Searches for conflicts stop at
// kMaxDistance commands (treated as a conflict there), which keeps the passes linear.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "codegen_commands.h"
#include "footprint.h"

namespace vacc::lower {

class CommandStream {
 public:
  static constexpr size_t kMaxDistance = 512;

  explicit CommandStream(const CodegenCommands &ops) : ops_(ops) {
    fps_.reserve(ops.size());
    for (const CodegenCommand &op : ops) fps_.push_back(footprint(op));
  }
  CodegenCommands take() { return std::move(ops_); }
  size_t size() const { return ops_.size(); }
  const CodegenCommand &op(size_t i) const { return ops_[i]; }

  // Index of the nearest command above i that conflicts with it (or -1 / the cap).
  int64_t barrier_above(size_t i) const {
    for (size_t j = i; j-- > 0;) {
      if (i - j > kMaxDistance) return static_cast<int64_t>(j);
      if (conflict(fps_[i], fps_[j])) return static_cast<int64_t>(j);
    }
    return -1;
  }
  // Index of the nearest command below i that conflicts with it (or size() / the cap).
  size_t barrier_below(size_t i) const {
    for (size_t j = i + 1; j < ops_.size(); ++j) {
      if (j - i > kMaxDistance) return j;
      if (conflict(fps_[i], fps_[j])) return j;
    }
    return ops_.size();
  }
  bool conflicts(size_t i, size_t j) const { return conflict(fps_[i], fps_[j]); }
  // Whether the command at i conflicts with none of those after it up to `to`.
  bool passes(size_t i, size_t to) const {
    for (size_t k = i + 1; k <= to; ++k)
      if (conflicts(i, k)) return false;
    return true;
  }
  // Reorders [begin, begin + order.size()) so that position begin + k holds what was at
  // begin + order[k].
  void permute(size_t begin, const std::vector<size_t> &order) {
    std::vector<CodegenCommand> ops;
    std::vector<Footprint> fps;
    for (size_t k : order) {
      ops.push_back(std::move(ops_[begin + k]));
      fps.push_back(std::move(fps_[begin + k]));
    }
    std::move(ops.begin(), ops.end(), ops_.begin() + static_cast<std::ptrdiff_t>(begin));
    std::move(fps.begin(), fps.end(), fps_.begin() + static_cast<std::ptrdiff_t>(begin));
  }
  // Moves the command at `from` to position `to`, the others keeping their order.
  void move(size_t from, size_t to) {
    if (from > to) {
      std::rotate(ops_.begin() + to, ops_.begin() + from, ops_.begin() + from + 1);
      std::rotate(fps_.begin() + to, fps_.begin() + from, fps_.begin() + from + 1);
    } else if (from < to) {
      std::rotate(ops_.begin() + from, ops_.begin() + from + 1, ops_.begin() + to + 1);
      std::rotate(fps_.begin() + from, fps_.begin() + from + 1, fps_.begin() + to + 1);
    }
  }

 private:
  CodegenCommands ops_;
  std::vector<Footprint> fps_;
};

}  // namespace vacc::lower
