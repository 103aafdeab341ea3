#include "vacc/simulator/timeline_compare.h"

#include <algorithm>
#include <map>
#include <utility>

namespace vacc::sim {

std::optional<Divergence> first_divergence(const std::vector<InsnSlice> &reference,
                                           const std::vector<InsnSlice> &model) {
  std::map<std::pair<int, uint32_t>, uint64_t> starts;
  for (const InsnSlice &s : model) starts.emplace(std::make_pair(s.track, s.index), s.start);
  std::vector<const InsnSlice *> order;
  for (const InsnSlice &s : reference) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const InsnSlice *a, const InsnSlice *b) {
    return a->start != b->start ? a->start < b->start : a->index < b->index;
  });
  for (const InsnSlice *s : order) {
    auto it = starts.find({s->track, s->index});
    if (it != starts.end() && it->second == s->start) continue;
    Divergence d;
    d.track = s->track;
    d.index = s->index;
    d.reference_start = s->start;
    if (it != starts.end()) d.model_start = it->second;
    return d;
  }
  return std::nullopt;
}

}  // namespace vacc::sim
