#include "vacc/graph/passes/fuse_matmul_epilogues.h"

#include <cstring>

#include "vacc/graph/shape_inference.h"

namespace vacc::graph {

namespace {

// The only reader of `v`, or null.
Node *sole_reader(Graph &graph, Value *v) {
  if (graph.is_output(v)) return nullptr;
  const std::vector<Node *> users = graph.consumers(v);
  return users.size() == 1 ? users[0] : nullptr;
}

// A constant of N float values laid along the last of `rank` dimensions ([N], [1, N], ...).
bool is_row_bias(const Value *c, int64_t N, size_t rank) {
  if (!c || !c->is_constant() || c->dtype != DType::kFloat32 || c->shape.empty() ||
      c->shape.size() > rank || c->shape.back() != N)
    return false;
  for (size_t d = 0; d + 1 < c->shape.size(); ++d)
    if (c->shape[d] != 1) return false;
  return true;
}

}  // namespace

int fuse_matmul_epilogues(Graph &graph) {
  int fused = 0;
  for (Node *mm : graph.nodes()) {
    if (graph.index_of(mm) < 0 || mm->op != OpKind::kMatMul || mm->input(2) ||
        mm->attrs.has("activation"))
      continue;
    Value *y = mm->outputs[0];
    const Value *b = mm->input(1);
    if (!y || y->dtype != DType::kFloat32 || y->shape.size() < 2 || !b->is_constant() ||
        b->rank() != 2)
      continue;
    const int64_t N = y->shape.back();
    Node *add = sole_reader(graph, y);
    if (add && add->op == OpKind::kAdd && !graph.is_output(add->outputs[0]) &&
        add->outputs[0]->shape == y->shape) {
      Value *c = add->input(0) == y ? add->input(1) : add->input(0);
      if (c != y && is_row_bias(c, N, y->shape.size())) {
        Tensor bias(DType::kFloat32, {N});
        std::memcpy(bias.raw(), c->constant->raw(), bias.nbytes());
        mm->inputs.push_back(graph.add_constant(graph.unique_name(y->name + ".bias"), bias));
        infer_node(*mm);
        graph.replace_all_uses(add->outputs[0], y);
        graph.remove_node(add);
        ++fused;
      }
    }
    Node *gelu = sole_reader(graph, y);
    if (gelu && gelu->op == OpKind::kGelu && gelu->input(0) == y &&
        !graph.is_output(gelu->outputs[0])) {
      const bool tanh_form = gelu->attrs.get_string("approximate", "none") == "tanh";
      mm->attrs.set("activation", std::string(tanh_form ? "gelu_tanh" : "gelu"));
      graph.replace_all_uses(gelu->outputs[0], y);
      graph.remove_node(gelu);
      ++fused;
    }
  }
  return fused;
}

}  // namespace vacc::graph
