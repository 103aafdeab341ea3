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

// Conv -> Sigmoid -> Mul(conv, sigmoid) (SiLU, as PyTorch exports it), the convolution's
// output read by those two only: the blocked convolution computes y * sigmoid(y) itself.
bool fuse_silu(Graph &graph, Node &conv, const std::vector<Node *> &users) {
  Value *y = conv.outputs[0];
  if (users.size() != 2) return false;
  Node *sig = users[0]->op == OpKind::kSigmoid ? users[0] : users[1];
  Node *mul = sig == users[0] ? users[1] : users[0];
  if (sig->op != OpKind::kSigmoid || mul->op != OpKind::kMul || sig->input(0) != y) return false;
  Value *s = sig->outputs[0];
  const bool operands =
      (mul->input(0) == y && mul->input(1) == s) || (mul->input(0) == s && mul->input(1) == y);
  if (!operands || graph.consumers(s).size() != 1 || graph.is_output(s) ||
      graph.is_output(mul->outputs[0]) || mul->outputs[0]->shape != y->shape)
    return false;
  conv.attrs.set("activation", std::string("silu"));
  graph.replace_all_uses(mul->outputs[0], y);
  graph.remove_node(mul);
  graph.remove_node(sig);
  return true;
}

}  // namespace

int fuse_activations(Graph &graph) {
  int fused = 0;
  for (Node *conv : graph.nodes()) {
    if (graph.index_of(conv) < 0 || (conv->op != OpKind::kConv && conv->op != OpKind::kConvNCHWc))
      continue;
    Value *y = conv->outputs[0];
    if (y->dtype != DType::kFloat32 || graph.is_output(y) || conv->attrs.has("activation_min") ||
        conv->attrs.has("activation_max") || conv->attrs.has("activation"))
      continue;
    std::vector<Node *> users = graph.consumers(y);
    if (conv->op == OpKind::kConvNCHWc && fuse_silu(graph, *conv, users)) {
      ++fused;
      continue;
    }
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
