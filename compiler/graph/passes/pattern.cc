#include "pattern.h"

#include <cmath>

#include "vacc/graph/shape_inference.h"

namespace vacc::graph::pattern {

std::optional<double> scalar(const Value *v) {
  if (!v || !v->is_constant() || v->constant->size() != 1 || !dtype_is_float(v->dtype))
    return std::nullopt;
  return v->constant->as_double(0);
}

bool is_scalar(const Value *v, double want) {
  const std::optional<double> s = scalar(v);
  return s && std::abs(*s - want) <= 1e-4 * std::abs(want);
}

bool float_constant(const Value *v) {
  return v && v->is_constant() && v->dtype == DType::kFloat32;
}

Node *sole_consumer(const Graph &graph, const Value *v) {
  if (!v || graph.is_output(v)) return nullptr;
  std::vector<Node *> users = graph.consumers(v);
  return users.size() == 1 ? users[0] : nullptr;
}

Node *producer_of(const Value *v, OpKind op) {
  Node *p = v ? v->producer : nullptr;
  return p && p->op == op && p->inputs.size() == 2 ? p : nullptr;
}

Value *other_input(const Node *node, const Value *v) {
  if (!node || node->inputs.size() != 2) return nullptr;
  if (node->inputs[0] == v) return node->inputs[1];
  if (node->inputs[1] == v) return node->inputs[0];
  return nullptr;
}

void replace_chain(Graph &graph, const std::vector<Node *> &chain, OpKind op,
                   std::vector<Value *> inputs, Value *out, Attributes attrs) {
  const std::string name = chain.back()->name;
  for (Node *n : chain) graph.remove_node(n);
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();
  infer_node(*graph.add_node(op, name, std::move(inputs), {out}, std::move(attrs)));
}

void finish_replacements(Graph &graph, int replaced) {
  if (!replaced) return;
  graph.sort_topologically();
  graph.remove_dead_nodes();
}

}  // namespace vacc::graph::pattern
