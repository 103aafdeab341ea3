#include "vacc/graph/onnx_import.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "recurrent_import.h"
#include "vacc/graph/op_registry.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/file.h"
#include "vacc/support/limits.h"

namespace vacc::graph {

namespace {

DType dtype_from_onnx(int32_t elem_type, const std::string &what) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT:
      return DType::kFloat32;
    case onnx::TensorProto::DOUBLE:
      return DType::kFloat64;
    case onnx::TensorProto::INT8:
      return DType::kInt8;
    case onnx::TensorProto::UINT8:
      return DType::kUInt8;
    case onnx::TensorProto::INT16:
      return DType::kInt16;
    case onnx::TensorProto::INT32:
      return DType::kInt32;
    case onnx::TensorProto::INT64:
      return DType::kInt64;
    case onnx::TensorProto::BOOL:
      return DType::kBool;
    default:
      break;
  }
  std::string name =
      onnx::TensorProto::DataType_IsValid(elem_type)
          ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem_type))
          : std::to_string(elem_type);
  fail(
      "{} has element type {}, which vacc does not support (supported: float, double, int8, "
      "uint8, int16, int32, int64, bool)",
      what, name);
}

Tensor tensor_from_proto(const onnx::TensorProto &proto, const std::string &what) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    fail(
        "{} stores its data in an external file, which vacc does not read; save the model "
        "with its weights inside the .onnx file",
        what);
  }
  DType dtype = dtype_from_onnx(proto.data_type(), what);
  Shape shape(proto.dims().begin(), proto.dims().end());
  // Sizes are checked before anything is allocated: a corrupt file must not exhaust memory.
  checked_tensor_bytes(shape, dtype_size(dtype), what);
  const int64_t n = num_elements(shape);
  auto check = [&](int64_t count) {
    if (count != n)
      fail("{} has {} values, expected {} for shape {}", what, count, n, shape_str(shape));
  };
  if (proto.has_raw_data()) {
    size_t nbytes = static_cast<size_t>(n) * dtype_size(dtype);
    if (proto.raw_data().size() != nbytes) {
      fail("{} has {} bytes of raw data, expected {} for {}{}", what, proto.raw_data().size(),
           nbytes, dtype_name(dtype), shape_str(shape));
    }
    Tensor t(dtype, shape);
    // An empty tensor has no buffer: memcpy from or to a null pointer is undefined even for 0.
    if (t.nbytes() != 0) std::memcpy(t.raw(), proto.raw_data().data(), t.nbytes());
    return t;
  }
  switch (dtype) {
    case DType::kFloat32:
      check(proto.float_data_size());
      break;
    case DType::kFloat64:
      check(proto.double_data_size());
      break;
    case DType::kInt64:
      check(proto.int64_data_size());
      break;
    default:
      check(proto.int32_data_size());
      break;
  }
  Tensor t(dtype, shape);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T *dst = reinterpret_cast<T *>(t.raw());
    if constexpr (std::is_same_v<T, float>) {
      for (int64_t i = 0; i < n; ++i) dst[i] = proto.float_data(i);
    } else if constexpr (std::is_same_v<T, double>) {
      for (int64_t i = 0; i < n; ++i) dst[i] = proto.double_data(i);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      for (int64_t i = 0; i < n; ++i) dst[i] = proto.int64_data(i);
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(proto.int32_data(i));
    }
  });
  return t;
}

class Importer {
 public:
  Importer(const std::string &source, const ImportOptions &options)
      : source_(source), options_(options) {}

  Graph run(const onnx::ModelProto &model) {
    opset_ = -1;
    for (const auto &import : model.opset_import()) {
      if (import.domain().empty() || import.domain() == "ai.onnx") {
        opset_ = static_cast<int>(import.version());
      }
    }
    if (opset_ < 0) opset_ = model.opset_import_size() == 0 ? 1 : -1;
    if (opset_ < 0) fail("{}: the model does not import the default ONNX domain", source_);
    graph_.opset = opset_;
    graph_.name = model.graph().name();
    for (const auto &prop : model.metadata_props()) graph_.metadata[prop.key()] = prop.value();
    const onnx::GraphProto &g = model.graph();
    for (const auto &init : g.initializer()) {
      std::string what = fmt::format("{}: initializer '{}'", source_, init.name());
      define(init.name(), graph_.add_constant(init.name(), tensor_from_proto(init, what)));
    }
    bool first_input = true;
    for (const auto &input : g.input()) {
      if (values_.count(input.name())) continue;  // an initializer listed as input (IR < 4)
      auto frozen = options_.frozen_inputs.find(input.name());
      if (frozen != options_.frozen_inputs.end()) {
        define(input.name(), graph_.add_constant(input.name(), frozen->second));
        continue;
      }
      Value *v = import_input(input, first_input);
      first_input = false;
      graph_.add_input(v);
      define(input.name(), v);
    }
    // A batch asked for must land somewhere: silently running a fixed-batch model at its own
    // batch would answer another question than the one asked. A model exported at exactly the
    // batch asked for answers it (an input of batch 4 given to a model fixed at 4).
    auto fixed_at_batch = [&](const Value *v) {
      return !v->shape.empty() && v->shape[0] == options_.batch;
    };
    if (options_.batch != 1 && !batch_bound_ && !graph_.inputs().empty() &&
        std::none_of(graph_.inputs().begin(), graph_.inputs().end(), fixed_at_batch)) {
      const Value *in = graph_.inputs()[0];
      fail(
          "{}: a batch of {} was asked for, but every graph input's first dimension is fixed "
          "(input '{}' is {}): re-export the model with a dynamic first axis "
          "(torch.onnx.export's dynamic_axes), or run it at its own batch",
          source_, options_.batch, in->name, shape_str(in->shape));
    }
    int index = 0;
    for (const auto &node : g.node()) import_node(node, index++);
    for (const auto &output : g.output()) {
      auto it = values_.find(output.name());
      if (it == values_.end()) {
        fail("{}: graph output '{}' is not produced by any node", source_, output.name());
      }
      graph_.add_output(it->second);
    }
    graph_.verify();
    return std::move(graph_);
  }

 private:
  void define(const std::string &name, Value *v) { values_[name] = v; }
  bool batch_bound_ = false;  // some graph input's first dimension was free and bound

  Value *import_input(const onnx::ValueInfoProto &info, bool first_input) {
    std::string what = fmt::format("{}: graph input '{}'", source_, info.name());
    if (!info.type().has_tensor_type()) {
      fail("{} is not a tensor (sequences, maps and optionals are not supported)", what);
    }
    const auto &tt = info.type().tensor_type();
    DType dtype = dtype_from_onnx(tt.elem_type(), what);
    Shape shape;
    if (!tt.has_shape()) fail("{} has no shape; vacc needs static input shapes", what);
    const std::vector<int64_t> &given = options_.input_shape;
    const bool bound_by_given = first_input && !given.empty();
    if (bound_by_given && given.size() != static_cast<size_t>(tt.shape().dim_size())) {
      fail("{} has rank {}, but the input given for it has shape {}", what, tt.shape().dim_size(),
           shape_str(given));
    }
    for (int k = 0; k < tt.shape().dim_size(); ++k) {
      const auto &dim = tt.shape().dim(k);
      if (dim.has_dim_value()) {
        shape.push_back(dim.dim_value());
        continue;
      }
      if (k == 0) batch_bound_ = true;
      auto named = options_.dims.find(dim.dim_param());
      if (bound_by_given) {
        shape.push_back(given[k]);
      } else if (named != options_.dims.end()) {
        shape.push_back(named->second);
      } else if (k == 0) {
        shape.push_back(options_.batch);
      } else {
        fail(
            "{} has a symbolic dimension {} ({}) that nothing binds, and vacc's shapes are "
            "static: {}",
            what, k, dim.dim_param().empty() ? "unnamed" : "'" + dim.dim_param() + "'",
            options_.bind_hint);
      }
    }
    checked_tensor_bytes(shape, dtype_size(dtype), what);
    return graph_.add_value(info.name(), dtype, shape);
  }

  Attribute attribute(const onnx::AttributeProto &a, const std::string &what) {
    switch (a.type()) {
      case onnx::AttributeProto::INT:
        return a.i();
      case onnx::AttributeProto::FLOAT:
        return a.f();
      case onnx::AttributeProto::STRING:
        return a.s();
      case onnx::AttributeProto::INTS:
        return std::vector<int64_t>(a.ints().begin(), a.ints().end());
      case onnx::AttributeProto::FLOATS:
        return std::vector<float>(a.floats().begin(), a.floats().end());
      case onnx::AttributeProto::TENSOR:
        return tensor_from_proto(a.t(), fmt::format("{}: attribute '{}'", what, a.name()));
      default:
        fail(
            "{}: attribute '{}' has a kind vacc does not support (graphs, sparse tensors and "
            "string lists)",
            what, a.name());
    }
  }

  // The tensor a Constant node holds, from whichever value_* attribute it uses.
  Tensor constant_value(const Attributes &attrs, const std::string &what) {
    if (attrs.has("value")) return attrs.get_tensor("value");
    if (attrs.has("value_float")) return Tensor::scalar<float>(attrs.get_float("value_float", 0));
    if (attrs.has("value_int")) return Tensor::scalar<int64_t>(attrs.get_int("value_int"));
    if (attrs.has("value_floats")) {
      std::vector<float> v = attrs.get_floats("value_floats");
      return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
    }
    if (attrs.has("value_ints")) {
      std::vector<int64_t> v = attrs.get_ints("value_ints");
      return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
    }
    fail("{}: no supported value attribute (value, value_float(s), value_int(s))", what);
  }

  // Input and output counts against ONNX's schema of the operator at the model's opset: a
  // kernel reads the inputs and writes the outputs its operator has, no others.
  void check_arity(const onnx::NodeProto &proto, const std::string &what) const {
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(proto.op_type(), opset_);
    if (!schema) return;
    auto check = [&](const char *kind, int n, int lo, int hi) {
      if (n >= lo && n <= hi) return;
      fail("{}: {} takes {} {} at opset {}, the node has {}", what, proto.op_type(),
           lo == hi                  ? std::to_string(lo)
           : hi == std::numeric_limits<int>::max() ? fmt::format("{} or more", lo)
                                                   : fmt::format("{} to {}", lo, hi),
           kind, opset_, n);
    };
    check("inputs", proto.input_size(), schema->min_input(), schema->max_input());
    check("outputs", proto.output_size(), schema->min_output(), schema->max_output());
  }

  void import_node(const onnx::NodeProto &proto, int index) {
    std::string what = fmt::format("{}: node {} (#{}, {})", source_,
                                   proto.name().empty() ? "<unnamed>" : "'" + proto.name() + "'",
                                   index, proto.op_type());
    if (!proto.domain().empty() && proto.domain() != "ai.onnx") {
      fail("{}: operator domain '{}' is not supported (only the default ONNX domain is)", what,
           proto.domain());
    }
    if (is_recurrent_op(proto.op_type())) {
      import_recurrent_node(proto, what);
      return;
    }
    std::optional<OpKind> op = op_from_onnx(proto.op_type());
    if (!op) {
      fail("{}: unsupported operator '{}'; vacc supports {}, LSTM, GRU, RNN", what,
           proto.op_type(), supported_onnx_ops());
    }
    const OpDef &def = op_def(*op);
    if (opset_ < def.opset_min || opset_ > def.opset_max) {
      fail(
          "{}: opset {} is outside vacc's supported range {}-{} for {}; re-export the model "
          "with an opset_version in that range",
          what, opset_, def.opset_min, def.opset_max, def.name);
    }
    check_arity(proto, what);
    Attributes attrs;
    for (const auto &a : proto.attribute()) attrs.set(a.name(), attribute(a, what));

    if (*op == OpKind::kConstant) {
      if (proto.output_size() != 1) fail("{}: expected one output", what);
      try {
        define(proto.output(0), graph_.add_constant(proto.output(0), constant_value(attrs, what)));
      } catch (const Error &e) {
        fail("{}", e.what());
      }
      return;
    }

    std::vector<Value *> inputs = node_inputs(proto, what);
    try {
      // The operator's import hook rewrites older opsets' forms into the one vacc implements.
      if (const auto import = def.import) {
        ImportContext ctx{graph_, opset_, proto.name()};
        import(ctx, attrs, inputs);
      }
    } catch (const Error &e) {
      fail("{}: {}", what, e.what());
    }
    // Later outputs may be optional (left unnamed); every operator produces its first.
    if (proto.output_size() == 0 || proto.output(0).empty())
      fail("{}: the node has no first output (name it: every operator produces one)", what);
    std::vector<Value *> outputs;
    for (int i = 0; i < proto.output_size(); ++i) {
      const std::string &name = proto.output(i);
      if (name.empty()) {
        outputs.push_back(nullptr);
        continue;
      }
      if (values_.count(name)) fail("{}: output '{}' is defined twice", what, name);
      outputs.push_back(graph_.add_value(name, DType::kFloat32, {}));
    }
    Node *node = graph_.add_node(*op, proto.name(), inputs, outputs, std::move(attrs));
    try {
      infer_node(*node);
    } catch (const Error &e) {
      fail("{}: {}", what, e.what());
    }
    if (folds_at_import(*node)) {
      try {
        fold(node);
      } catch (const Error &e) {
        fail("{}: {}", what, e.what());
      }
    }
    for (Value *out : outputs) {
      if (out) define(out->name, out);
    }
  }

  // The values a node reads, null where it omits an optional input.
  std::vector<Value *> node_inputs(const onnx::NodeProto &proto, const std::string &what) {
    std::vector<Value *> inputs;
    for (int i = 0; i < proto.input_size(); ++i) {
      const std::string &name = proto.input(i);
      if (name.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      auto it = values_.find(name);
      if (it == values_.end()) {
        fail(
            "{}: input {} '{}' is not a graph input, an initializer or the output of an "
            "earlier node (the file is malformed or not topologically sorted)",
            what, i, name);
      }
      inputs.push_back(it->second);
    }
    return inputs;
  }

  // LSTM, GRU and RNN: the operators of their equations (recurrent_import.h).
  void import_recurrent_node(const onnx::NodeProto &proto, const std::string &what) {
    check_arity(proto, what);
    const std::vector<Value *> inputs = node_inputs(proto, what);
    std::vector<Value *> outputs;
    try {
      outputs = import_recurrent(graph_, proto, inputs);
    } catch (const Error &e) {
      fail("{}: {}", what, e.what());
    }
    for (int i = 0; i < proto.output_size(); ++i) {
      if (proto.output(i).empty()) continue;
      if (values_.count(proto.output(i)))
        fail("{}: output '{}' is defined twice", what, proto.output(i));
      define(proto.output(i), outputs[i]);
    }
  }

  // Shape computations fold here, as they are imported, so that an input that decides a
  // shape (Reshape's shape, Expand's, Slice's starts...) is a constant when its consumer's
  // shape is inferred: nodes whose inputs are all constant (or that read only shapes) and
  // whose outputs are integers or booleans. Float constant subgraphs are left to the
  // constant folding pass.
  bool folds_at_import(const Node &node) const {
    const OpDef &def = op_def(node.op);
    for (const Value *out : node.outputs) {
      if (out && dtype_is_float(out->dtype)) return false;
    }
    if (def.reads_shapes_only) return true;
    bool any = false;
    for (const Value *in : node.inputs) {
      if (in && !in->is_constant()) return false;
      any |= in != nullptr;
    }
    return any;
  }

  void fold(Node *node) {
    std::vector<const Tensor *> in;
    for (const Value *v : node->inputs)
      in.push_back(v && v->is_constant() ? v->constant.get() : nullptr);
    std::vector<Tensor> outs = execute_node(*node, in);
    std::vector<Value *> outputs = node->outputs;
    graph_.remove_node(node);
    for (size_t k = 0; k < outputs.size() && k < outs.size(); ++k) {
      if (outputs[k]) outputs[k]->constant = std::make_shared<const Tensor>(std::move(outs[k]));
    }
  }

  std::string source_;
  ImportOptions options_;
  Graph graph_;
  int opset_ = 0;
  std::unordered_map<std::string, Value *> values_;
};

}  // namespace

Graph import_onnx_bytes(const std::string &bytes, const std::string &source,
                        const ImportOptions &options) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    fail(
        "{}: not a valid ONNX model (the protobuf could not be parsed); check that the file "
        "is an .onnx model and is not truncated",
        source);
  }
  if (!model.has_graph()) fail("{}: the model has no graph", source);
  return Importer(source, options).run(model);
}

Graph import_onnx(const std::string &path, const ImportOptions &options) {
  return import_onnx_bytes(read_file(path, "the file"), path, options);
}

bool imports_onnx_operator(const std::string &op_type) {
  return op_from_onnx(op_type) || is_recurrent_op(op_type);
}

Tensor read_onnx_tensor(const std::string &path) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(read_file(path, "the file"))) {
    fail("{}: not a serialized ONNX TensorProto", path);
  }
  return tensor_from_proto(proto, path);
}

}  // namespace vacc::graph
