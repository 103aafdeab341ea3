#include "vacc/graph/passes/constant_folding.h"

#include <algorithm>

#include "vacc/graph/reference_executor.h"

namespace vacc::graph {

namespace {
// A Pad of zeros on every side (PyTorch writes one before DenseNet's average pools).
bool pads_nothing(const Node &node) {
  if (node.op != OpKind::kPad) return false;
  const Value *pads = node.input(1);
  std::vector<int64_t> p;
  if (pads) {
    if (!pads->is_constant()) return false;
    for (int64_t i = 0; i < pads->constant->size(); ++i) p.push_back(pads->constant->as_int(i));
  } else {
    p = node.attrs.get_ints("pads", {});
  }
  return !p.empty() && std::all_of(p.begin(), p.end(), [](int64_t v) { return v == 0; });
}

bool bypassable(const Node &node) {
  if (node.op == OpKind::kIdentity || pads_nothing(node)) return true;
  if (node.op != OpKind::kDropout) return false;
  // Inference Dropout is the identity when nobody reads the mask.
  bool mask_used = node.outputs.size() > 1 && node.outputs[1];
  const Value *training = node.input(2);
  bool maybe_training = training && (!training->is_constant() || training->constant->as_int(0));
  return !mask_used && !maybe_training;
}
}  // namespace

int fold_constants(Graph &graph) {
  int changed = 0;
  for (Node *node : graph.nodes()) {
    if (bypassable(*node) && node->outputs[0] && !graph.is_output(node->outputs[0])) {
      graph.replace_all_uses(node->outputs[0], node->inputs[0]);
      graph.remove_node(node);
      ++changed;
      continue;
    }
    bool all_const =
        !node->inputs.empty() && std::all_of(node->inputs.begin(), node->inputs.end(),
                                             [](const Value *v) { return !v || v->is_constant(); });
    if (!all_const) continue;
    std::vector<const Tensor *> in;
    for (const Value *v : node->inputs) in.push_back(v ? v->constant.get() : nullptr);
    std::vector<Tensor> outs = execute_node(*node, in);
    for (size_t i = 0; i < node->outputs.size() && i < outs.size(); ++i) {
      Value *old = node->outputs[i];
      if (!old) continue;
      Value *folded =
          graph.add_constant(graph.unique_name(old->name + ".folded"), std::move(outs[i]));
      folded->frac_bits = old->frac_bits;
      folded->zero_point = old->zero_point;
      graph.replace_all_uses(old, folded);
    }
    graph.remove_node(node);
    ++changed;
  }
  graph.remove_dead_nodes();
  return changed;
}

}  // namespace vacc::graph
