#include "vacc/graph/passes/recognize_gelu.h"

#include <cmath>

#include "pattern.h"

namespace vacc::graph {

namespace {

using pattern::is_scalar;
using pattern::other_input;
using pattern::producer_of;
using pattern::sole_consumer;

// v = x * c (either order) for the constant c, read only by `user`: x, else null.
Value *scaled_by(const Graph &graph, const Value *v, double c, const Node *user,
                 std::vector<Node *> *nodes) {
  Node *mul = producer_of(v, OpKind::kMul);
  if (!mul || sole_consumer(graph, v) != user) return nullptr;
  for (int k = 0; k < 2; ++k) {
    if (is_scalar(mul->inputs[1 - k], c)) {
      nodes->push_back(mul);
      return mul->inputs[k];
    }
  }
  return nullptr;
}

// The x of Erf's input x / sqrt(2) (or x * 1/sqrt(2)).
Value *erf_argument(const Graph &graph, const Node *erf, std::vector<Node *> *nodes) {
  const Value *t = erf->input(0);
  if (Node *div = producer_of(t, OpKind::kDiv);
      div && sole_consumer(graph, t) == erf && is_scalar(div->inputs[1], std::sqrt(2.0))) {
    nodes->push_back(div);
    return div->inputs[0];
  }
  return scaled_by(graph, t, 1.0 / std::sqrt(2.0), erf, nodes);
}

// True when v = x^3: Pow(x, 3), x * (x * x) or (x * x) * x, read only by `user`.
bool is_cube(const Graph &graph, const Value *v, const Value *x, const Node *user,
             std::vector<Node *> *nodes) {
  if (sole_consumer(graph, v) != user) return false;
  if (Node *pow = producer_of(v, OpKind::kPow); pow && pow->inputs[0] == x) {
    if (!is_scalar(pow->inputs[1], 3.0)) return false;
    nodes->push_back(pow);
    return true;
  }
  Node *mul = producer_of(v, OpKind::kMul);
  if (!mul) return false;
  const Value *sq = other_input(mul, x);
  Node *inner = producer_of(sq, OpKind::kMul);
  if (!inner || inner->inputs[0] != x || inner->inputs[1] != x || sole_consumer(graph, sq) != mul)
    return false;
  nodes->push_back(mul);
  nodes->push_back(inner);
  return true;
}

// The x of Tanh's input sqrt(2/pi) * (x + 0.044715 * x^3).
Value *tanh_argument(const Graph &graph, const Node *tanh, std::vector<Node *> *nodes) {
  const double kSqrt2OverPi = std::sqrt(2.0 / M_PI);
  Node *scale = producer_of(tanh->input(0), OpKind::kMul);
  if (!scale || sole_consumer(graph, tanh->input(0)) != tanh) return nullptr;
  for (int k = 0; k < 2; ++k) {
    if (!is_scalar(scale->inputs[1 - k], kSqrt2OverPi)) continue;
    const Value *u = scale->inputs[k];
    Node *add = producer_of(u, OpKind::kAdd);
    if (!add || sole_consumer(graph, u) != scale) return nullptr;
    for (int j = 0; j < 2; ++j) {
      Value *x = add->inputs[j];
      std::vector<Node *> found = {scale, add};
      const Value *cubic = add->inputs[1 - j];
      Node *coef = producer_of(cubic, OpKind::kMul);
      if (!coef || sole_consumer(graph, cubic) != add) continue;
      for (int i = 0; i < 2; ++i) {
        if (!is_scalar(coef->inputs[1 - i], 0.044715)) continue;
        std::vector<Node *> with = found;
        with.push_back(coef);
        if (is_cube(graph, coef->inputs[i], x, coef, &with)) {
          nodes->insert(nodes->end(), with.begin(), with.end());
          return x;
        }
      }
    }
  }
  return nullptr;
}

struct GeluMatch {
  Value *x = nullptr, *out = nullptr;
  std::vector<Node *> nodes;
};

// center is an Erf or Tanh: 1 + center, times x, times 0.5 (in either of the two orders).
bool match_gelu(const Graph &graph, Node *center, GeluMatch *m) {
  m->nodes = {center};
  m->x = center->op == OpKind::kErf ? erf_argument(graph, center, &m->nodes)
                                    : tanh_argument(graph, center, &m->nodes);
  if (!m->x || m->x->dtype != DType::kFloat32) return false;
  Node *plus = sole_consumer(graph, center->outputs[0]);
  if (!plus || plus->op != OpKind::kAdd || !is_scalar(other_input(plus, center->outputs[0]), 1.0))
    return false;
  Node *mul = sole_consumer(graph, plus->outputs[0]);
  Value *other = other_input(mul, plus->outputs[0]);
  if (!mul || mul->op != OpKind::kMul || !other) return false;
  m->nodes.push_back(plus);
  m->nodes.push_back(mul);
  if (other == m->x) {  // (x * t) * 0.5
    Node *half = sole_consumer(graph, mul->outputs[0]);
    if (!half || half->op != OpKind::kMul || !is_scalar(other_input(half, mul->outputs[0]), 0.5))
      return false;
    m->nodes.push_back(half);
    m->out = half->outputs[0];
  } else {  // (x * 0.5) * t
    if (scaled_by(graph, other, 0.5, mul, &m->nodes) != m->x) return false;
    m->out = mul->outputs[0];
  }
  return m->out->shape == m->x->shape;
}

}  // namespace

int recognize_gelu(Graph &graph) {
  int recognized = 0;
  for (Node *center : graph.nodes()) {
    if (graph.index_of(center) < 0) continue;
    if (center->op != OpKind::kErf && center->op != OpKind::kTanh) continue;
    GeluMatch m;
    if (!match_gelu(graph, center, &m)) continue;
    Attributes attrs;
    attrs.set("approximate", std::string(center->op == OpKind::kErf ? "none" : "tanh"));
    pattern::replace_chain(graph, m.nodes, OpKind::kGelu, {m.x}, m.out, std::move(attrs));
    ++recognized;
  }
  pattern::finish_replacements(graph, recognized);
  return recognized;
}

}  // namespace vacc::graph
