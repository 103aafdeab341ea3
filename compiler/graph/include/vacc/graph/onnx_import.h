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

#include "vacc/graph/graph.h"
#include "vacc/graph/op_registry.h"

namespace vacc::graph {

struct ImportOptions {
  // Symbolic dimensions (dim_param) take the value given here, else default_dim.
  std::map<std::string, int64_t> dims;
  int64_t default_dim = 1;
  // Graph inputs replaced by these constants (for inputs that decide shapes, e.g. the shape
  // input of a Reshape fed from outside the model).
  std::map<std::string, Tensor> frozen_inputs;
};

Graph import_onnx(const std::string &path, const ImportOptions &options = {});
// The same from the bytes of a serialized ModelProto; `source` names it in diagnostics.
Graph import_onnx_bytes(const std::string &bytes, const std::string &source,
                        const ImportOptions &options = {});

// Reads a serialized TensorProto (.pb file, as in ONNX's test data).
Tensor read_onnx_tensor(const std::string &path);

}  // namespace vacc::graph
