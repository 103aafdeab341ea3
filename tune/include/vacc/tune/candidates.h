// A task's candidates: the points of its layer's schedule space that pass the operator's rules
// (lower::check_schedule), each with its knob choices, and the heuristic's point among them.
// What every search strategy draws from.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/lower/schedule_space.h"

namespace vacc::tune {

struct Candidates {
  lower::ScheduleSpace space;
  std::vector<uint64_t> points;               // space indices of the legal points, ascending
  std::vector<std::vector<size_t>> choices;   // each point's choice per knob
  std::unordered_map<uint64_t, size_t> position;  // space index -> position in points
  std::optional<size_t> heuristic;            // position of default_schedule's point
  uint64_t refused = 0;                       // points the rules refused

  size_t size() const { return points.size(); }
  lower::AccelSchedule schedule(size_t i) const { return space.at(points[i]); }
  // The position of the point whose choices are `c`, when it is legal.
  std::optional<size_t> find(const std::vector<size_t> &c) const;
};

// Points beyond `limit` are not enumerated: a space that large is sampled (uniformly, seeded),
// keeping the heuristic's point. Without `tails` the tile knobs keep only the sizes that divide
// their axes (the space the tuner searches by default, TuneOptions::tails).
Candidates enumerate_candidates(const isa::HwConfig &config, const lower::Layer &layer,
                                int vthreads = 2, bool tails = true,
                                uint64_t limit = uint64_t{1} << 20);

}  // namespace vacc::tune
