#include "vacc/tune/candidates.h"

#include <algorithm>
#include <random>

#include "vacc/support/error.h"

namespace vacc::tune {

std::optional<size_t> Candidates::find(const std::vector<size_t> &c) const {
  const auto it = position.find(space.index(c));
  if (it == position.end()) return std::nullopt;
  return it->second;
}

Candidates enumerate_candidates(const isa::HwConfig &config, const lower::Layer &layer,
                                int vthreads, bool tails, uint64_t limit) {
  Candidates out;
  out.space = lower::schedule_space(config, layer);
  if (!tails)
    for (lower::Knob &k : out.space.knobs) {
      if (k.name.rfind("tile_", 0) != 0) continue;
      const int64_t extent = k.values.back();  // a tile knob's largest size: its whole axis
      std::erase_if(k.values, [&](int64_t v) { return extent % v != 0; });
    }
  const uint64_t size = out.space.size();
  std::vector<uint64_t> indices;
  if (size <= limit) {
    indices.resize(size);
    for (uint64_t i = 0; i < size; ++i) indices[i] = i;
  } else {
    std::mt19937_64 rng(size);
    std::uniform_int_distribution<uint64_t> pick(0, size - 1);
    for (uint64_t i = 0; i < limit; ++i) indices.push_back(pick(rng));
    std::sort(indices.begin(), indices.end());
    indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  }
  std::optional<uint64_t> heuristic;
  try {
    const lower::AccelSchedule h = lower::heuristic_schedule(config, layer, vthreads);
    heuristic = out.space.find(h);
    VACC_CHECK(heuristic) << layer.name << ": the default schedule " << lower::describe(h)
                          << " is not a point of its operator's schedule space";
  } catch (const Error &) {
    // No default schedule fits: the tuner may still find one.
  }
  if (heuristic && !std::binary_search(indices.begin(), indices.end(), *heuristic))
    indices.insert(std::lower_bound(indices.begin(), indices.end(), *heuristic), *heuristic);
  for (uint64_t index : indices) {
    if (lower::check_schedule(config, layer, out.space.at(index))) {
      ++out.refused;
      continue;
    }
    out.position[index] = out.points.size();
    out.points.push_back(index);
    out.choices.push_back(out.space.choices(index));
  }
  if (heuristic) {
    const auto it = out.position.find(*heuristic);
    VACC_CHECK(it != out.position.end())
        << layer.name << ": the default schedule " << lower::describe(out.space.at(*heuristic))
        << " breaks its operator's rules: "
        << lower::check_schedule(config, layer, out.space.at(*heuristic)).value_or("");
    out.heuristic = it->second;
  }
  return out;
}

}  // namespace vacc::tune
