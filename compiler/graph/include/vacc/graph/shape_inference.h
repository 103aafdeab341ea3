// Shape and dtype inference for every operator of the graph IR. Shapes are static: symbolic
// dimensions are bound at import (onnx_import.h). Inputs that decide an output shape (the
// shape of Reshape, the pads of Pad) must be constants.
#pragma once

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Sets the dtype and shape of each output of `node` from its inputs and attributes. Throws
// vacc::Error carrying only the reason (callers add the node's name): a shape mismatch, a
// wrong dtype, a missing input, an attribute out of range.
void infer_node(Node &node);

// Adds a node of `op` computing one new value (named uniquely from `name`, of `dtype`) from
// `inputs`, and infers its shape: what a pass inserting a node needs.
Value *add_inferred_node(Graph &graph, OpKind op, const std::string &name,
                         std::vector<Value *> inputs, DType dtype, Attributes attrs = {});

// Infers every node in order; errors name the node (name, index, op type).
void infer_shapes(Graph &graph);

// NumPy-style broadcast of two shapes; throws vacc::Error when they are incompatible.
Shape broadcast_shapes(const Shape &a, const Shape &b);

// An axis in [-rank, rank) (or [-rank, rank] when `inclusive`) made non-negative.
int normalize_axis(int64_t axis, int rank, const char *what, bool inclusive = false);

}  // namespace vacc::graph
