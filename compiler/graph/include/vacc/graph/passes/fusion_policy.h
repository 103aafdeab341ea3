// How the fusion passes (fuse_pools.h, fuse_residual_adds.h) decide whether to fuse an
// epilogue into its convolution. The backend gives the policy (lower/graph_choices.h), since
// graph/ does not link it: whether it can run the fused node, and, once `vacc tune` has
// measured both forms, whether the fused node is faster than its parts run apart.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/partition.h"

namespace vacc::graph {

// The measured cycles of a node's accelerator program (its tuned best), or nullopt when they
// were not measured.
using MeasuredCycles = std::function<std::optional<uint64_t>(const Node &)>;

struct FusionPolicy {
  // Whether the backend can run the fused node (nullopt) or why not; unset: nothing fuses.
  AccelLegality legality;
  // Keep every fusion apart, even where legal: how `vacc tune` finds the parts' workloads.
  bool keep_apart = false;
  // When set, a legal fusion is not made if the parts' measured cycles together are fewer
  // than the fused node's; a part or the fused node not measured leaves the fusion made.
  MeasuredCycles measured;
  // The backend cost model's cycles for a node's accelerator program (its default schedule),
  // for fusions that do not always pay (chain_convs.h): one is made only where measured, or,
  // not measured, where the model expects it clearly faster. Unset: such fusions are made only
  // where measured (or always, with `always`).
  MeasuredCycles modelled;
  // Make every legal fusion, whatever the cycles say (GraphChoice::kAlways).
  bool always = false;
  // Told of each legal fusion's decision (for the compile's report): the fused node, whether
  // it was kept apart, whether the heuristic (without measured cycles) keeps it apart, and the
  // cycles apart and fused where measured.
  std::function<void(const Node &fused, bool apart, bool heuristic_apart,
                     std::optional<uint64_t> cycles_apart, std::optional<uint64_t> cycles_fused)>
      decided;

  FusionPolicy() = default;
  FusionPolicy(AccelLegality l) : legality(std::move(l)) {}  // NOLINT: a legality is a policy
  explicit operator bool() const { return static_cast<bool>(legality); }

  // Before a fusion is made: the cycles of the parts apart (nullopt: not all measured).
  std::optional<uint64_t> cycles_apart(const std::vector<const Node *> &parts) const;
  // After it is made on `fused` (legal): whether the parts apart measured fewer cycles (and
  // `decided` is told).
  bool prefers_apart(const std::optional<uint64_t> &apart, const Node &fused) const;
};

}  // namespace vacc::graph
