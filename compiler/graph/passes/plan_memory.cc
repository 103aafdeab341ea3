#include "vacc/graph/passes/plan_memory.h"

#include <algorithm>

namespace vacc::graph {

MemoryPlan plan_memory(const Graph &graph, int64_t alignment) {
  MemoryPlan plan;
  std::vector<Node *> nodes = graph.nodes();
  int end = static_cast<int>(nodes.size());
  std::vector<const Value *> order;
  auto define = [&](const Value *v, int index) {
    if (!v || v->is_constant() || plan.slots.count(v)) return;
    MemoryPlan::Slot slot;
    int64_t bytes = num_elements(v->shape) * dtype_size(v->dtype);
    slot.bytes = (bytes + alignment - 1) / alignment * alignment;
    slot.first = index;
    slot.last = graph.is_output(v) ? end : index;
    plan.slots[v] = slot;
    order.push_back(v);
  };
  for (const Value *in : graph.inputs()) define(in, -1);
  for (int i = 0; i < end; ++i) {
    for (const Value *out : nodes[i]->outputs) define(out, i);
  }
  for (int i = 0; i < end; ++i) {
    for (const Value *in : nodes[i]->inputs) {
      auto it = in ? plan.slots.find(in) : plan.slots.end();
      if (it != plan.slots.end()) it->second.last = std::max(it->second.last, i);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](const Value *a, const Value *b) {
    return plan.slots[a].bytes > plan.slots[b].bytes;
  });
  std::vector<const Value *> placed;
  for (const Value *v : order) {
    MemoryPlan::Slot &slot = plan.slots[v];
    plan.total_bytes += slot.bytes;
    // Intervals taken by placed tensors whose lifetimes overlap this one, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Value *p : placed) {
      const MemoryPlan::Slot &o = plan.slots[p];
      if (o.first <= slot.last && slot.first <= o.last)
        busy.push_back({o.offset, o.offset + o.bytes});
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto &[lo, hi] : busy) {
      if (offset + slot.bytes <= lo) break;
      offset = std::max(offset, hi);
    }
    slot.offset = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + slot.bytes);
    placed.push_back(v);
  }
  return plan;
}

}  // namespace vacc::graph
