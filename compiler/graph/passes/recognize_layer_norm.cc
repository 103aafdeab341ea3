#include "vacc/graph/passes/recognize_layer_norm.h"

#include <algorithm>

#include "pattern.h"

namespace vacc::graph {

namespace {

using pattern::is_scalar;
using pattern::other_input;
using pattern::producer_of;
using pattern::sole_consumer;

// The first normalized axis of a keepdims ReduceMean over the trailing axes of its input, or -1.
int trailing_mean_axis(const Node *mean) {
  if (!mean || mean->op != OpKind::kReduceMean || mean->attrs.get_int("keepdims", 1) == 0)
    return -1;
  const Value *x = mean->input(0), *axes = mean->input(1);
  if (!x || !axes || !axes->is_constant() || x->rank() == 0) return -1;
  std::vector<int64_t> a = axes->constant->to_int_vector();
  if (a.empty()) return -1;
  for (int64_t &v : a) {
    if (v < -x->rank() || v >= x->rank()) return -1;
    if (v < 0) v += x->rank();
  }
  std::sort(a.begin(), a.end());
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k] != x->rank() - static_cast<int64_t>(a.size() - k)) return -1;
  return static_cast<int>(a[0]);
}

// p broadcasts over the normalized shape alone (its shape broadcast with `norm` is `norm`).
bool fits_normalized(const Value *p, const Shape &norm, DType dtype) {
  if (!p || p->dtype != dtype || p->rank() > static_cast<int>(norm.size())) return false;
  for (size_t k = 0; k < p->shape.size(); ++k) {
    const int64_t d = p->shape[k], n = norm[norm.size() - p->shape.size() + k];
    if (d != 1 && d != n) return false;
  }
  return true;
}

struct LayerNormMatch {
  Value *x = nullptr, *scale = nullptr, *bias = nullptr, *out = nullptr;
  int axis = 0;
  double eps = 0;
  std::vector<Node *> nodes;  // every node the LayerNormalization replaces
};

// Matches the decomposition whose first ReduceMean is `mean`.
bool match_layer_norm(const Graph &graph, Node *mean, LayerNormMatch *m) {
  m->axis = trailing_mean_axis(mean);
  if (m->axis < 0) return false;
  m->x = mean->inputs[0];
  if (m->x->dtype != DType::kFloat32) return false;
  Node *sub = sole_consumer(graph, mean->outputs[0]);
  if (!sub || sub->op != OpKind::kSub || sub->input(0) != m->x || sub->input(1) != mean->outputs[0])
    return false;
  Value *d = sub->outputs[0];
  if (graph.is_output(d)) return false;
  std::vector<Node *> users = graph.consumers(d);
  Node *square = nullptr, *div = nullptr;
  for (Node *u : users) {
    if (u->op == OpKind::kPow && u->input(0) == d && is_scalar(u->input(1), 2.0))
      square = u;
    else if (u->op == OpKind::kMul && u->input(0) == d && u->input(1) == d)
      square = u;
    else if (u->op == OpKind::kDiv && u->input(0) == d)
      div = u;
  }
  if (users.size() != 2 || !square || !div) return false;
  Node *var = sole_consumer(graph, square->outputs[0]);
  if (trailing_mean_axis(var) != m->axis || var->input(0) != square->outputs[0]) return false;
  if (var->input(1)->constant->to_int_vector().size() !=
      mean->input(1)->constant->to_int_vector().size())
    return false;
  Node *add = sole_consumer(graph, var->outputs[0]);
  if (!add || add->op != OpKind::kAdd) return false;
  const std::optional<double> eps = pattern::scalar(other_input(add, var->outputs[0]));
  if (!eps) return false;
  m->eps = *eps;
  Node *sqrt = sole_consumer(graph, add->outputs[0]);
  if (!sqrt || sqrt->op != OpKind::kSqrt || sqrt->outputs[0] != div->input(1) ||
      sole_consumer(graph, sqrt->outputs[0]) != div)
    return false;
  m->nodes = {mean, sub, square, var, add, sqrt, div};
  m->out = div->outputs[0];
  const Shape norm(m->x->shape.begin() + m->axis, m->x->shape.end());
  // The optional affine part: Mul by a scale, then Add of a bias, each over the normalized axes.
  if (Node *mul = sole_consumer(graph, m->out); mul && mul->op == OpKind::kMul) {
    Value *s = other_input(mul, m->out);
    if (fits_normalized(s, norm, m->x->dtype) && s != m->out) {
      m->scale = s;
      m->nodes.push_back(mul);
      m->out = mul->outputs[0];
      if (Node *plus = sole_consumer(graph, m->out); plus && plus->op == OpKind::kAdd) {
        Value *b = other_input(plus, m->out);
        if (fits_normalized(b, norm, m->x->dtype) && b != m->out) {
          m->bias = b;
          m->nodes.push_back(plus);
          m->out = plus->outputs[0];
        }
      }
    }
  }
  return true;
}

}  // namespace

int recognize_layer_norm(Graph &graph) {
  int recognized = 0;
  for (Node *mean : graph.nodes()) {
    if (graph.index_of(mean) < 0) continue;  // removed by an earlier match
    LayerNormMatch m;
    if (!match_layer_norm(graph, mean, &m)) continue;
    const Shape norm(m.x->shape.begin() + m.axis, m.x->shape.end());
    if (!m.scale) {
      Tensor ones(DType::kFloat32, norm);
      std::fill(ones.data<float>(), ones.data<float>() + ones.size(), 1.0f);
      m.scale = graph.add_constant(graph.unique_name(mean->name + ".scale"), std::move(ones));
    }
    Attributes attrs;
    attrs.set("axis", static_cast<int64_t>(m.axis));
    attrs.set("epsilon", static_cast<float>(m.eps));
    pattern::replace_chain(graph, m.nodes, OpKind::kLayerNormalization, {m.x, m.scale, m.bias},
                           m.out, std::move(attrs));
    ++recognized;
  }
  pattern::finish_replacements(graph, recognized);
  return recognized;
}

}  // namespace vacc::graph
