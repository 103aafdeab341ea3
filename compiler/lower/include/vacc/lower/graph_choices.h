// The schedule choices made on the graph, before its layers exist: whether a convolution's
// windows fold into its reduction (graph/passes/fold_windows.h), and whether a max pool or a
// residual add fuses into the convolution that produces its input (fuse_pools.h,
// fuse_residual_adds.h). Each is a knob of the convolution's schedule whose two values are
// different layers: the folded 1x1 convolution or the plain one; the fused convolution, or the
// convolution and the pool (add) apart. It is searched by measuring both forms' workloads
// (`vacc tune` tunes every form, tune/task.h) and decided when compiling: a form's cycles are
// its workload's tuned best, and the fewer cycles win. A choice with a form not measured is the
// heuristic's: fold where few input channels leave most of the reduction's lanes idle
// (host_layout.h's should_fold), fuse wherever the fused form is legal.
//
// The decisions are greedy, in the pipeline's order: folding compares the convolutions alone;
// fusion then compares the convolution as folding left it with its fused form.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/fold_windows.h"
#include "vacc/graph/passes/fusion_policy.h"
#include "vacc/isa/config.h"
#include "vacc/lower/lower_model.h"

namespace vacc::lower {

enum class GraphChoice {
  kDecide,     // by the tuned cycles where both forms were measured, else the heuristic
  kHeuristic,  // the heuristic's, whatever was tuned
  kAlways,     // at every legal site (fold every convolution that can fold; fuse every legal pair)
  kNever,      // at no site
};

struct GraphChoices {
  GraphChoice fold = GraphChoice::kDecide;
  GraphChoice fuse = GraphChoice::kDecide;  // max pools and residual adds
  // Conv chains (graph/passes/chain_convs.h): kDecide and kHeuristic chain where the cost model
  // expects it clearly faster (kDecide: by the tuned cycles where both forms were measured).
  GraphChoice chain = GraphChoice::kDecide;
};

// One decision, for the compile's report: "folded" or "unfolded", "pool fused" or "pool apart",
// "add fused" or "add apart", "chain fused" or "chain apart", and whether the tuned cycles made it
// (with both forms' cycles).
struct GraphDecision {
  std::string node;  // the convolution's name
  std::string choice;
  bool tuned = false;
  bool heuristic = true;                         // the heuristic makes the same choice
  uint64_t chosen_cycles = 0, other_cycles = 0;  // tuned: the chosen and the other form's
};
using GraphDecisions = std::shared_ptr<std::vector<GraphDecision>>;

// Whether a plain NCHW accelerator convolution can run folded: one group, a window larger than
// 1x1, a folded reduction of fewer blocks than the plain one's (its input channels leave lanes
// of each block idle), and a folded form that is supported and tiles.
bool can_fold_windows(const graph::Node &node, const isa::HwConfig &config, int vthreads);
// The heuristic's choice among those: host_layout.h's should_fold (few input channels, a
// window larger than 1x1); and as graph::fold_windows' callback.
bool folds_windows(const graph::Node &node, const isa::HwConfig &config, int vthreads = 2);
graph::WindowFolding window_folding(const isa::HwConfig &config, int vthreads = 2);

// The tuned cycles of the accelerator layer of `node` (nullopt: it has none, or its workload
// has no tuned trial).
std::optional<uint64_t> tuned_cycles(const graph::Node &node, const isa::HwConfig &config,
                                     const TunedLookup &tuned);

// The pipeline's callbacks for `choice`, consulting `tuned` (may be empty) under kDecide.
// Decisions are appended to `decisions` when given (kDecide only).
graph::WindowFolding window_folding(const isa::HwConfig &config, int vthreads, GraphChoice choice,
                                    TunedLookup tuned, GraphDecisions decisions = nullptr);
graph::FusionPolicy fusion_policy(const isa::HwConfig &config, int vthreads, GraphChoice choice,
                                  TunedLookup tuned, const std::string &what,
                                  GraphDecisions decisions = nullptr);

}  // namespace vacc::lower
