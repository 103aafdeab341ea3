#include "vacc/graph/reference_executor.h"

#include <fmt/format.h>

#include <memory>
#include <unordered_map>

#include "vacc/graph/op_registry.h"

namespace vacc::graph {

std::vector<Tensor> execute_node(const Node &node, const std::vector<const Tensor *> &in) {
  const OpDef &def = op_def(node.op);
  if (!def.reference) fail("no kernel for {}", def.name);
  return def.reference(node, in);
}

ReferenceExecutor::ReferenceExecutor(const Graph &graph)
    : ReferenceExecutor(graph, [](size_t, const Node &node, const std::vector<const Tensor *> &in) {
        return execute_node(node, in);
      }) {}

std::vector<Tensor> ReferenceExecutor::run(const std::vector<Tensor> &inputs,
                                           const Observer &observer) const {
  const std::vector<Value *> &graph_inputs = graph_.inputs();
  if (inputs.size() != graph_inputs.size()) {
    fail("graph '{}' takes {} inputs, {} given", graph_.name, graph_inputs.size(), inputs.size());
  }
  std::unordered_map<const Value *, std::shared_ptr<const Tensor>> env;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value *v = graph_inputs[i];
    if (inputs[i].dtype() != v->dtype || inputs[i].shape() != v->shape) {
      fail("input '{}' expects {}{}, got {}{}", v->name, dtype_name(v->dtype), shape_str(v->shape),
           dtype_name(inputs[i].dtype()), shape_str(inputs[i].shape()));
    }
    env[v] = std::make_shared<const Tensor>(inputs[i]);
    if (observer) observer(*v, inputs[i]);
  }
  // Last use of each value, to free intermediates early.
  std::vector<Node *> nodes = graph_.nodes();
  std::unordered_map<const Value *, size_t> last_use;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Value *in : nodes[i]->inputs) {
      if (in) last_use[in] = i;
    }
  }
  auto lookup = [&](const Value *v) -> std::shared_ptr<const Tensor> {
    if (v->is_constant()) return v->constant;
    auto it = env.find(v);
    VACC_CHECK(it != env.end()) << "value '" << v->name << "' used before it is computed";
    return it->second;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node &node = *nodes[i];
    std::vector<std::shared_ptr<const Tensor>> held;
    std::vector<const Tensor *> in;
    for (const Value *v : node.inputs) {
      if (!v) {
        in.push_back(nullptr);
        continue;
      }
      held.push_back(lookup(v));
      in.push_back(held.back().get());
    }
    std::vector<Tensor> outs;
    try {
      outs = runner_(i, node, in);
    } catch (const Error &e) {
      fail("{}: {}", node.describe(static_cast<int>(i)), e.what());
    }
    for (size_t k = 0; k < node.outputs.size() && k < outs.size(); ++k) {
      const Value *v = node.outputs[k];
      if (!v) continue;
      VACC_CHECK(outs[k].shape() == v->shape && outs[k].dtype() == v->dtype)
          << node.describe(static_cast<int>(i)) << " output " << k << " is "
          << dtype_name(outs[k].dtype()) << shape_str(outs[k].shape()) << ", inferred "
          << dtype_name(v->dtype) << shape_str(v->shape);
      if (observer) observer(*v, outs[k]);
      env[v] = std::make_shared<const Tensor>(std::move(outs[k]));
    }
    for (const Value *v : node.inputs) {
      if (v && last_use[v] == i && !graph_.is_output(v)) env.erase(v);
    }
  }
  std::vector<Tensor> results;
  for (const Value *v : graph_.outputs()) results.push_back(*lookup(v));
  return results;
}

}  // namespace vacc::graph
