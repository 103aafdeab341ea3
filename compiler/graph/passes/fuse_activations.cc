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

// Makes `conv` clamp its output as the Relu or Clip `act` does; false for another activation or
// a Clip of computed bounds.
bool set_clamp(Node &conv, const Node &act) {
  if (act.op != OpKind::kRelu && act.op != OpKind::kClip) return false;
  const float inf = std::numeric_limits<float>::infinity();
  std::optional<float> lo = 0.0f, hi = inf;
  if (act.op == OpKind::kClip) {
    lo = bound(act, 1, -inf);
    hi = bound(act, 2, inf);
    if (!lo || !hi) return false;
  }
  if (*lo > -inf) conv.attrs.set("activation_min", *lo);
  if (*hi < inf) conv.attrs.set("activation_max", *hi);
  return true;
}

// Makes `conv` compute y * HardSigmoid(y; alpha, beta) itself.
void set_hardswish(Node &conv, float alpha, float beta) {
  conv.attrs.set("activation", std::string("hardswish"));
  conv.attrs.set("activation_alpha", alpha);
  conv.attrs.set("activation_beta", beta);
}

// Conv -> Sigmoid or HardSigmoid -> Mul(conv, gate) (SiLU and HardSwish, as PyTorch exports
// them at opset 13), the convolution's output read by those two only: the blocked convolution
// computes y * gate(y) itself.
bool fuse_gate(Graph &graph, Node &conv, const std::vector<Node *> &users) {
  Value *y = conv.outputs[0];
  if (users.size() != 2) return false;
  auto is_gate = [](const Node *n) {
    return n->op == OpKind::kSigmoid || n->op == OpKind::kHardSigmoid;
  };
  Node *gate = is_gate(users[0]) ? users[0] : users[1];
  Node *mul = gate == users[0] ? users[1] : users[0];
  if (!is_gate(gate) || mul->op != OpKind::kMul || gate->input(0) != y) return false;
  Value *s = gate->outputs[0];
  const bool operands =
      (mul->input(0) == y && mul->input(1) == s) || (mul->input(0) == s && mul->input(1) == y);
  if (!operands || graph.consumers(s).size() != 1 || graph.is_output(s) ||
      graph.is_output(mul->outputs[0]) || mul->outputs[0]->shape != y->shape)
    return false;
  if (gate->op == OpKind::kSigmoid)
    conv.attrs.set("activation", std::string("silu"));
  else
    set_hardswish(conv, gate->attrs.get_float("alpha", 0.2f), gate->attrs.get_float("beta", 0.5f));
  graph.replace_all_uses(mul->outputs[0], y);
  graph.remove_node(mul);
  graph.remove_node(gate);
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
    if (conv->op == OpKind::kConvNCHWc && fuse_gate(graph, *conv, users)) {
      ++fused;
      continue;
    }
    if (users.size() != 1) continue;
    Node *act = users[0];
    if (act->input(0) != y || graph.is_output(act->outputs[0])) continue;
    if (act->op == OpKind::kHardSwish && conv->op == OpKind::kConvNCHWc)  // opset 14's own op
      set_hardswish(*conv, 1.0f / 6, 0.5f);
    else if (!set_clamp(*conv, *act))
      continue;
    graph.replace_all_uses(act->outputs[0], y);
    graph.remove_node(act);
    ++fused;
  }
  return fused;
}

}  // namespace vacc::graph
