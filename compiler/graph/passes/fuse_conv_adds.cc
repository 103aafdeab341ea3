#include "vacc/graph/passes/fuse_conv_adds.h"

namespace vacc::graph {

namespace {

// The blocked convolution producing `v` for `add` alone, or null.
Node *conv_add_producer(const Graph &g, const Value *v, const Node *add) {
  Node *conv = v->producer;
  if (!conv || conv->op != OpKind::kConvNCHWc || conv->input(3) || g.is_output(v) ||
      conv->attrs.has("activation_min") || conv->attrs.has("activation_max") ||
      conv->attrs.has("activation"))
    return nullptr;
  const std::vector<Node *> users = g.consumers(v);
  if (users.size() != 1 || users[0] != add) return nullptr;
  return conv;
}

bool fuse_conv_add(Graph &g, Node *add) {
  Value *a = add->inputs[0], *b = add->input(1);
  if (!b || a == b || a->shape != b->shape || a->layout != b->layout || !a->layout.blocked ||
      a->dtype != DType::kFloat32 || b->dtype != DType::kFloat32)
    return false;
  Node *conv = nullptr;
  int operand = -1;
  for (int i = 0; i < 2; ++i) {
    Node *c = conv_add_producer(g, add->inputs[i], add);
    if (c && (!conv || g.index_of(c) > g.index_of(conv))) {
      conv = c;
      operand = i;
    }
  }
  if (!conv) return false;
  Value *sum = add->outputs[0];
  conv->inputs.resize(4, nullptr);
  conv->inputs[3] = add->inputs[1 - operand];
  g.remove_node(add);
  conv->outputs[0] = sum;
  sum->producer = conv;
  sum->layout = a->layout;
  return true;
}

}  // namespace

int fuse_conv_adds(Graph &graph) {
  int fused = 0;
  for (Node *node : graph.nodes())
    if (node->op == OpKind::kAdd) fused += fuse_conv_add(graph, node);
  if (fused) {
    graph.sort_topologically();
    graph.verify();
  }
  return fused;
}

}  // namespace vacc::graph
