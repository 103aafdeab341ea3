#include "vacc/graph/passes/fuse_residual_adds.h"

#include <algorithm>
#include <tuple>

namespace vacc::graph {

namespace {

// The accelerator convolution producing `v` for `add` alone, or null.
Node *residual_producer(const Graph &g, const Value *v, const Node *add) {
  Node *conv = v->producer;
  if (!conv || conv->op != OpKind::kQConv || conv->target != Target::kAccel || conv->input(3) ||
      g.is_output(v))
    return nullptr;
  const std::vector<Node *> users = g.consumers(v);
  if (users.size() != 1 || users[0] != add) return nullptr;
  return conv;
}

bool fuse_residual(Graph &g, Node *add, const FusionPolicy &policy) {
  if (add->inputs[0] == add->inputs[1]) return false;
  // Of two candidates, an unstrided one (a strided downsample loads its input sparsely and
  // measured slower fused), then the one with the longer reduction per output (a 3x3
  // convolution rather than a 1x1): the epilogue's ALU work hides behind its GEMMs. Then the
  // one computed later.
  auto rank = [&](const Node *c) {
    const Shape &w = c->inputs[1]->shape;
    const std::vector<int64_t> strides = c->attrs.get_ints("strides", {1, 1});
    const bool unstrided =
        std::all_of(strides.begin(), strides.end(), [](int64_t v) { return v == 1; });
    return std::make_tuple(unstrided, w[1] * w[2] * w[3], g.index_of(c));
  };
  Node *conv = nullptr;
  int operand = -1;
  for (int i = 0; i < 2; ++i) {
    Node *c = residual_producer(g, add->inputs[i], add);
    if (c && (!conv || rank(c) > rank(conv))) {
      conv = c;
      operand = i;
    }
  }
  if (!conv) return false;
  const std::optional<uint64_t> apart = policy.cycles_apart({conv, add});
  const Attributes before = conv->attrs;
  const char *own = operand == 0 ? "lshift_a" : "lshift_b";
  const char *skip = operand == 0 ? "lshift_b" : "lshift_a";
  conv->attrs.set("residual_lshift", add->attrs.get_int(own, 0));
  conv->attrs.set("residual_lshift_skip", add->attrs.get_int(skip, 0));
  conv->attrs.set("residual_rshift", add->attrs.get_int("rshift", 0));
  conv->attrs.set("residual_clip_min", add->attrs.get_int("clip_min", -128));
  conv->attrs.set("residual_clip_max", add->attrs.get_int("clip_max", 127));
  conv->inputs.resize(4, nullptr);
  conv->inputs[3] = add->inputs[1 - operand];
  // Not when the backend cannot run it fused, or its parts ran faster apart.
  if (policy.legality(*conv) || policy.prefers_apart(apart, *conv)) {
    conv->attrs = before;
    conv->inputs.resize(3);
    return false;
  }
  Value *sum = add->outputs[0];
  g.remove_node(add);
  conv->outputs[0] = sum;
  sum->producer = conv;
  return true;
}

}  // namespace

int fuse_residual_adds(Graph &graph, const FusionPolicy &policy) {
  if (!policy.legality || policy.keep_apart) return 0;
  int fused = 0;
  for (Node *node : graph.nodes())
    if (node->op == OpKind::kQAdd && node->target == Target::kAccel)
      fused += fuse_residual(graph, node, policy);
  if (fused) {
    graph.sort_topologically();
    graph.verify();
  }
  return fused;
}

}  // namespace vacc::graph
