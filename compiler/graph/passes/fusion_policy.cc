#include "vacc/graph/passes/fusion_policy.h"

namespace vacc::graph {

std::optional<uint64_t> FusionPolicy::cycles_apart(const std::vector<const Node *> &parts) const {
  if (!measured) return std::nullopt;
  uint64_t sum = 0;
  for (const Node *part : parts) {
    const std::optional<uint64_t> c = measured(*part);
    if (!c) return std::nullopt;
    sum += *c;
  }
  return sum;
}

bool FusionPolicy::prefers_apart(const std::optional<uint64_t> &apart, const Node &fused) const {
  const std::optional<uint64_t> together = measured ? measured(fused) : std::nullopt;
  const bool keep = apart && together && *apart < *together;
  if (decided) decided(fused, keep, false, apart, together);  // an epilogue fuses by default
  return keep;
}

}  // namespace vacc::graph
