// The default schedules' cost model: a layer's modelled cycles from its compute and memory
// cycles. With two virtual threads one hides behind the other, but not perfectly.
#pragma once

#include <algorithm>

namespace vacc::lower {

// The cycles the default schedules' cost model charges per instruction (issue, tokens).
constexpr double kInsnOverheadCycles = 8;

inline double modelled_time(double compute, double memory, int vthreads) {
  return vthreads > 1 ? std::max(compute, memory) + 0.05 * std::min(compute, memory)
                      : compute + memory;
}

}  // namespace vacc::lower
