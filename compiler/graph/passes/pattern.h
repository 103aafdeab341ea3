// What the graph passes that recognize decomposed operators (recognize_layer_norm,
// recognize_gelu) ask of a node's neighbourhood (private to compiler/graph/passes).
#pragma once

#include <optional>

#include "vacc/graph/graph.h"

namespace vacc::graph::pattern {

// True when v is a float32 constant.
bool float_constant(const Value *v);
// The value of a one-element float constant, else nullopt.
std::optional<double> scalar(const Value *v);
// True when v is a one-element constant within a relative 1e-4 of `want`.
bool is_scalar(const Value *v, double want);
// The only node reading v when v is read by exactly one node and is not a graph output.
Node *sole_consumer(const Graph &graph, const Value *v);
// The node producing v when it is an `op` of two inputs, else null.
Node *producer_of(const Value *v, OpKind op);
// The other input of a two-input node one of whose inputs is `v`, else null.
Value *other_input(const Node *node, const Value *v);

// Replaces the matched `chain` (its last node's name is kept) by one `op` node reading `inputs`
// (absent trailing inputs as null) and writing `out`, whose shape is inferred again.
void replace_chain(Graph &graph, const std::vector<Node *> &chain, OpKind op,
                   std::vector<Value *> inputs, Value *out, Attributes attrs);
// After the replacements of a pass: nodes in topological order again, the dead ones removed.
void finish_replacements(Graph &graph, int replaced);

}  // namespace vacc::graph::pattern
