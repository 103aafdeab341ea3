// The features the learned cost model sees of a (layer, schedule) on a config: the knobs and
// the loop nest they make (tile extents and counts per axis, the scratchpad footprint of a
// tile, the bytes each load and store moves, GEMM and instruction counts, reuse), plus the
// config's array, bandwidth and latency, so that a model trained on some tasks and configs
// ranks the candidates of others. Computed from the parameters without lowering: thousands of
// candidates a millisecond.
#pragma once

#include <vector>

#include "vacc/isa/config.h"
#include "vacc/lower/operators.h"

namespace vacc::tune {

inline constexpr int kNumFeatures = 33;
// The feature holding log2 of the estimated instruction count (what lowering and simulating a
// candidate take time in proportion to).
inline constexpr int kInstructionsFeature = 26;

std::vector<float> schedule_features(const isa::HwConfig &config, const lower::Layer &layer,
                                     const lower::AccelSchedule &s);

}  // namespace vacc::tune
