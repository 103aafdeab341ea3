#include "vacc/graph/passes/chain_convs.h"

#include <fmt/format.h>

#include "vacc/graph/conv_chain.h"
#include "vacc/graph/op_registry.h"

namespace vacc::graph {
namespace {

// No fused pool, and (`residual_ok`) or no fused residual add.
bool plain_epilogue(const Node &conv, bool residual_ok) {
  return (residual_ok || !conv.input(3)) && !conv.attrs.has("pool_kernel_shape");
}

// `second` reads `first`'s output alone, and is a 1x1 convolution the chain can end with.
bool chainable(const Graph &g, const Node &first, const Node &second) {
  if (first.op != OpKind::kQConv || first.target != Target::kAccel ||
      !plain_epilogue(first, false) || !first.input(2) || !second.input(2))
    return false;
  const Value *mid = first.outputs[0];
  if (g.is_output(mid) || g.consumers(mid).size() != 1 || second.inputs[0] != mid ||
      !mid->layout.blocked)
    return false;
  const Value *w = second.inputs[1];
  if (w->rank() < 4 || w->shape[2] != 1 || w->shape[3] != 1) return false;
  for (int64_t s : second.attrs.get_ints("strides", {1, 1}))
    if (s != 1) return false;
  for (int64_t p : second.attrs.get_ints("pads", {0, 0, 0, 0}))
    if (p != 0) return false;
  return second.attrs.get_int("group", 1) == 1 &&
         second.attrs.get_string("auto_pad", "NOTSET") == "NOTSET";
}

bool make_chain(Graph &g, Node *first, Node *second, const FusionPolicy &policy) {
  // The chain as it would be, outside the graph, for the backend's questions.
  Node chain;
  chain.op = OpKind::kQConvChain;
  chain.name = fmt::format("{}+{}", first->name, second->name);
  chain.inputs = {first->inputs[0], first->inputs[1], first->inputs[2], second->inputs[1],
                  second->inputs[2]};
  if (Value *skip = second->input(3)) chain.inputs.push_back(skip);  // a fused residual add
  chain.outputs = {second->outputs[0]};
  chain.attrs = conv_chain_attrs(*first, *second);
  chain.target = Target::kAccel;
  if (policy.legality(chain)) return false;
  if (!policy.always) {
    const std::optional<uint64_t> apart = policy.cycles_apart({first, second});
    const std::optional<uint64_t> together =
        policy.measured ? policy.measured(chain) : std::nullopt;
    // The heuristic's choice: the cost model's, where it gives figures.
    bool modelled = false;
    if (policy.modelled) {
      const std::optional<uint64_t> a = policy.modelled(*first), b = policy.modelled(*second),
                                    c = policy.modelled(chain);
      modelled = a && b && c && double(*c) < kChainMargin * double(*a + *b);
    }
    // Both forms measured: the faster. The parts measured but not the chain: apart (the tuner
    // measured what it was given; a chain it never saw would leave the program not all tuned).
    // Neither: the cost model.
    const bool chained = apart ? together && *together < *apart : modelled;
    if (policy.decided) policy.decided(chain, !chained, !modelled, apart, together);
    if (!chained) return false;
  }
  const int64_t macs = first->model_macs.value_or(0) + second->model_macs.value_or(0);
  std::vector<Value *> inputs = chain.inputs, outputs = chain.outputs;
  const std::string name = chain.name;
  Attributes attrs = chain.attrs;
  g.remove_node(second);
  g.remove_node(first);
  Node *made = g.add_node(OpKind::kQConvChain, name, std::move(inputs), std::move(outputs),
                          std::move(attrs));
  made->target = Target::kAccel;
  made->model_macs = macs;
  op_def(OpKind::kQConvChain).infer(*made);
  return true;
}

}  // namespace

int chain_convs(Graph &graph, const FusionPolicy &policy) {
  if (!policy.legality || policy.keep_apart) return 0;
  int made = 0;
  for (Node *second : graph.nodes()) {
    if (second->op != OpKind::kQConv || second->target != Target::kAccel ||
        !plain_epilogue(*second, true))
      continue;
    Node *first = second->inputs[0]->producer;
    if (first && chainable(graph, *first, *second))
      made += make_chain(graph, first, second, policy);
  }
  if (made) {
    graph.sort_topologically();
    graph.remove_dead_nodes();
    graph.verify();
  }
  return made;
}

}  // namespace vacc::graph
