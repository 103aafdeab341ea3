#include "vacc/graph/shape_inference.h"

#include <fmt/format.h>

#include <algorithm>

#include "vacc/graph/op_registry.h"
#include "vacc/support/limits.h"

namespace vacc::graph {

Shape broadcast_shapes(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      fail("shapes {} and {} cannot be broadcast together", shape_str(a), shape_str(b));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int normalize_axis(int64_t axis, int rank, const char *what, bool inclusive) {
  int64_t hi = inclusive ? rank : rank - 1;
  if (axis < -rank || axis > hi) {
    fail("{} {} is out of range for a tensor of rank {}", what, axis, rank);
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

void infer_node(Node &n) {
  const OpDef &def = op_def(n.op);
  if (!def.infer) fail("no shape inference for {}", def.name);
  def.infer(n);
  // Bounded here, before the importer, a pass or the executor allocates what a shape claims.
  for (const Value *out : n.outputs)
    if (out)
      checked_tensor_bytes(out->shape, dtype_size(out->dtype),
                           fmt::format("output '{}'", out->name));
}

Value *add_inferred_node(Graph &graph, OpKind op, const std::string &name,
                         std::vector<Value *> inputs, DType dtype, Attributes attrs) {
  Value *out = graph.add_value(graph.unique_name(name), dtype, {});
  infer_node(*graph.add_node(op, out->name, std::move(inputs), {out}, std::move(attrs)));
  return out;
}

void infer_shapes(Graph &graph) {
  int index = 0;
  for (Node *node : graph.nodes()) {
    try {
      infer_node(*node);
    } catch (const Error &e) {
      fail("{}: {}", node->describe(index), e.what());
    }
    ++index;
  }
}

}  // namespace vacc::graph
