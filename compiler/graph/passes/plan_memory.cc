#include "vacc/graph/passes/plan_memory.h"

#include <algorithm>

namespace vacc::graph {

namespace {

// The byte offset of each input of `concat` inside its output when the inputs can be written
// there by their producers (an in-place concatenation); empty when they cannot: the axis must
// have only unit dimensions before it (each input is then one contiguous slice), every input a
// CPU node's result read by nothing else and concatenated once, each slice aligned.
std::vector<int64_t> concat_slices(const Graph &graph, const Node &concat, int64_t alignment,
                                   const std::unordered_map<const Value *, int> &member) {
  const Value *out = concat.outputs.empty() ? nullptr : concat.outputs[0];
  if (!out || concat.target != Target::kCpu || concat.inputs.size() < 2) return {};
  const int rank = out->rank();
  int64_t axis = concat.attrs.get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return {};
  for (int64_t d = 0; d < axis; ++d)
    if (out->shape[d] != 1) return {};
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (const Value *in : concat.inputs) {
    if (!in || !in->producer || in->producer->target != Target::kCpu || graph.is_output(in) ||
        member.count(in) || offset % alignment != 0)
      return {};
    const std::vector<Node *> users = graph.consumers(in);
    if (users.size() != 1 || users[0] != &concat) return {};
    if (std::count(concat.inputs.begin(), concat.inputs.end(), in) != 1) return {};
    offsets.push_back(offset);
    offset += num_elements(in->shape) * dtype_size(in->dtype);
  }
  return offsets;
}

}  // namespace

MemoryPlan plan_memory(const Graph &graph, int64_t alignment, bool in_place_concat) {
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
  // In-place concatenations: each input lives in its slice of the output, which lives from
  // the first input's producer to the output's last reader.
  std::unordered_map<const Value *, int> member;  // input -> its concatenation's node index
  std::unordered_map<const Value *, std::vector<std::pair<const Value *, int64_t>>> slices;
  for (int i = 0; in_place_concat && i < end; ++i) {
    const Node &concat = *nodes[i];
    if (concat.op != OpKind::kConcat) continue;
    const std::vector<int64_t> offsets = concat_slices(graph, concat, alignment, member);
    if (offsets.empty()) continue;
    MemoryPlan::Slot &whole = plan.slots[concat.outputs[0]];
    for (size_t k = 0; k < offsets.size(); ++k) {
      const Value *in = concat.inputs[k];
      whole.first = std::min(whole.first, plan.slots[in].first);
      slices[concat.outputs[0]].push_back({in, offsets[k]});
      member[in] = i;
    }
    plan.in_place.insert(&concat);
  }
  std::stable_sort(order.begin(), order.end(), [&](const Value *a, const Value *b) {
    return plan.slots[a].bytes > plan.slots[b].bytes;
  });
  std::vector<const Value *> placed;
  for (const Value *v : order) {
    if (member.count(v)) continue;  // placed with its concatenation
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
    for (const auto &[in, at] : slices[v]) plan.slots[in].offset = offset + at;
  }
  return plan;
}

}  // namespace vacc::graph
