#include "vacc/graph/passes/fuse_activations.h"

#include <limits>
#include <optional>

namespace vacc::graph {

namespace {

// A bound of Clip: input `i` when constant (nullopt: not constant, so not fusable); absent is
// `none`.
std::optional<float> bound(const Node &clip, size_t i, float none) {
  const Value *v = clip.input(i);
  if (!v) return none;
  if (!v->is_constant() || v->constant->size() != 1) return std::nullopt;
  return static_cast<float>(v->constant->as_double(0));
}

}  // namespace

int fuse_activations(Graph &graph) {
  int fused = 0;
  for (Node *conv : graph.nodes()) {
    if (graph.index_of(conv) < 0 || (conv->op != OpKind::kConv && conv->op != OpKind::kConvNCHWc))
      continue;
    Value *y = conv->outputs[0];
    if (y->dtype != DType::kFloat32 || graph.is_output(y) || conv->attrs.has("activation_min") ||
        conv->attrs.has("activation_max"))
      continue;
    std::vector<Node *> users = graph.consumers(y);
    if (users.size() != 1) continue;
    Node *act = users[0];
    if (act->op != OpKind::kRelu && act->op != OpKind::kClip) continue;
    if (act->input(0) != y || graph.is_output(act->outputs[0])) continue;
    const float inf = std::numeric_limits<float>::infinity();
    std::optional<float> lo = 0.0f, hi = inf;
    if (act->op == OpKind::kClip) {
      lo = bound(*act, 1, -inf);
      hi = bound(*act, 2, inf);
      if (!lo || !hi) continue;
    }
    if (*lo > -inf) conv->attrs.set("activation_min", *lo);
    if (*hi < inf) conv->attrs.set("activation_max", *hi);
    graph.replace_all_uses(act->outputs[0], y);
    graph.remove_node(act);
    ++fused;
  }
  return fused;
}

}  // namespace vacc::graph
