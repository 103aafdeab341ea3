// Static memory planning: every tensor a run computes (graph inputs and node outputs, not
// constants) gets an offset in one arena, such that two tensors alive at the same time never
// overlap. Lifetimes run from the defining node to the last reading node (graph outputs live
// to the end). Placement is greedy by decreasing size, at the lowest fitting offset.
//
// With in_place_concat, a Concat whose inputs are contiguous slices of its output (only unit
// dimensions before the axis) and are read by nothing else has them planned inside the
// output: their producers write the concatenation, and the Concat step finds its inputs
// already in place (in_place lists it; the CPU kernels then copy nothing).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "vacc/graph/graph.h"

namespace vacc::graph {

struct MemoryPlan {
  struct Slot {
    int64_t offset = 0;
    int64_t bytes = 0;
    int first = 0;  // index of the defining node (-1 for graph inputs)
    int last = 0;   // index of the last reading node (num_nodes for graph outputs)
  };
  std::unordered_map<const Value *, Slot> slots;
  int64_t arena_bytes = 0;                    // size of the arena
  int64_t total_bytes = 0;                    // what one buffer per tensor would take
  std::unordered_set<const Node *> in_place;  // concatenations written in place
};

MemoryPlan plan_memory(const Graph &graph, int64_t alignment = 64, bool in_place_concat = false);

}  // namespace vacc::graph
