// ONNX import (Debian's libonnx / protobuf): a ModelProto of the default domain becomes a Graph
// with every shape inferred. Each operator is accepted within its opset range (the registry's
// OpDef::opset_min and opset_max, within kMinOpset..kMaxOpset). Version differences between opsets
// are normalized here (Clip/Pad/Reshape attributes become constant inputs, Softmax's axis is made
// explicit), so that the rest of vacc sees one semantics per operator.
//
// Every problem a user's file can cause is a vacc::Error naming the file and, where one is
// at fault, the node (name, index, op type) and the reason: an unsupported operator or
// attribute, a malformed file, a shape or dtype mismatch, a dynamic shape.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/graph/op_registry.h"

namespace vacc::graph {

// Shapes are static: every symbolic dimension (dim_param) of a graph input is bound at import,
// from the first of: input_shape (for the model's first graph input), dims (by name), batch (for
// dimension 0 only). Any other symbolic dimension is an error naming the graph input, the
// dimension and `bind_hint`.
struct ImportOptions {
  // The shape of the model's first graph input that is not an initializer (the one `vacc run
  // --input X.npy` feeds): binds every symbolic dimension of that input.
  std::vector<int64_t> input_shape;
  // Symbolic dimensions by name.
  std::map<std::string, int64_t> dims;
  // Dimension 0 (the batch) of every graph input, when symbolic and bound by nothing above.
  int64_t batch = 1;
  // How the caller's user binds a dimension, for the error.
  std::string bind_hint =
      "give the input's shape (vacc run: --input X.npy; --batch N binds dimension 0)";
  // Graph inputs replaced by these constants (for inputs that decide shapes, e.g. the shape
  // input of a Reshape fed from outside the model).
  std::map<std::string, Tensor> frozen_inputs;
};

Graph import_onnx(const std::string &path, const ImportOptions &options = {});
// The same from the bytes of a serialized ModelProto; `source` names it in diagnostics.
Graph import_onnx_bytes(const std::string &bytes, const std::string &source,
                        const ImportOptions &options = {});

// Whether the importer takes an ONNX operator: the registry's (op_from_onnx), and LSTM, GRU
// and RNN, which it imports as the operators of their equations, unrolled over the sequence.
bool imports_onnx_operator(const std::string &op_type);

// Reads a serialized TensorProto (.pb file, as in ONNX's test data).
Tensor read_onnx_tensor(const std::string &path);

}  // namespace vacc::graph
