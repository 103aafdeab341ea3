#include "vacc/compile/graph_package.h"

#include <unordered_map>

#include "vacc/graph/macs.h"
#include "vacc/graph/op_registry.h"
#include "vacc/support/error.h"

namespace vacc::compile {

namespace {

using nlohmann::ordered_json;

const graph::DType kAllDTypes[] = {
    graph::DType::kFloat32, graph::DType::kFloat64, graph::DType::kInt8,  graph::DType::kUInt8,
    graph::DType::kInt16,   graph::DType::kInt32,   graph::DType::kInt64, graph::DType::kBool};

std::vector<uint8_t> tensor_bytes(const graph::Tensor &t) {
  return std::vector<uint8_t>(t.raw(), t.raw() + t.nbytes());
}

ordered_json attrs_json(const graph::Attributes &attrs, isa::Package &p) {
  ordered_json j = ordered_json::object();
  for (const auto &[name, attr] : attrs.all()) {
    std::visit(
        [&, &name = name](const auto &v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            j[name] = {{"int", v}};
          } else if constexpr (std::is_same_v<T, float>) {
            j[name] = {{"float", v}};
          } else if constexpr (std::is_same_v<T, std::string>) {
            j[name] = {{"string", v}};
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            j[name] = {{"ints", v}};
          } else if constexpr (std::is_same_v<T, std::vector<float>>) {
            j[name] = {{"floats", v}};
          } else {
            ordered_json t;
            t["dtype"] = graph::dtype_name(v.dtype());
            t["shape"] = v.shape();
            t["blob"] = p.add_blob(tensor_bytes(v));
            j[name] = {{"tensor", t}};
          }
        },
        attr);
  }
  return j;
}

graph::Attributes attrs_from_json(const nlohmann::ordered_json &j, const isa::Package &p,
                                  const std::string &step) {
  graph::Attributes attrs;
  for (const auto &[name, v] : j.items()) {
    if (v.contains("int")) {
      attrs.set(name, v["int"].get<int64_t>());
    } else if (v.contains("float")) {
      attrs.set(name, v["float"].get<float>());
    } else if (v.contains("string")) {
      attrs.set(name, v["string"].get<std::string>());
    } else if (v.contains("ints")) {
      attrs.set(name, v["ints"].get<std::vector<int64_t>>());
    } else if (v.contains("floats")) {
      attrs.set(name, v["floats"].get<std::vector<float>>());
    } else if (v.contains("tensor")) {
      const auto &t = v["tensor"];
      graph::Tensor tensor(dtype_from_name(t.at("dtype").get<std::string>()),
                           t.at("shape").get<graph::Shape>());
      const auto &blob = p.blobs.at(t.at("blob").get<uint32_t>());
      if (blob.size() != tensor.nbytes())
        fail("step '{}': attribute '{}' holds {} bytes, its shape needs {}", step, name,
             blob.size(), tensor.nbytes());
      if (!blob.empty()) std::memcpy(tensor.raw(), blob.data(), blob.size());
      attrs.set(name, std::move(tensor));
    } else {
      fail("step '{}': attribute '{}' has an unknown kind", step, name);
    }
  }
  return attrs;
}

}  // namespace

graph::DType dtype_from_name(const std::string &name) {
  for (graph::DType d : kAllDTypes)
    if (name == graph::dtype_name(d)) return d;
  fail("unknown tensor dtype '{}'", name);
}

isa::Package package_graph(const graph::Graph &graph, const graph::MemoryPlan &plan,
                           const isa::HwConfig &config) {
  isa::Package p;
  p.model = graph.name;
  p.config_name = config.name;
  p.isa_fingerprint = config.isa_fingerprint();
  p.arena_bytes = plan.arena_bytes;
  for (const auto &[k, v] : graph.metadata) p.metadata[k] = v;

  std::unordered_map<const graph::Value *, int32_t> index;
  auto tensor_of = [&](const graph::Value *v) -> int32_t {
    if (!v) return -1;
    auto it = index.find(v);
    if (it != index.end()) return it->second;
    isa::PackageTensor t;
    t.name = v->name;
    t.dtype = graph::dtype_name(v->dtype);
    t.shape = v->shape;
    t.blocked = v->layout.blocked;
    t.block_n = v->layout.block_n;
    t.block_c = v->layout.block_c;
    t.frac_bits = v->frac_bits;
    t.zero_point = v->zero_point;
    if (v->is_constant()) {
      t.blob = p.add_blob(tensor_bytes(*v->constant));
    } else {
      auto slot = plan.slots.find(v);
      VACC_CHECK(slot != plan.slots.end()) << "value '" << v->name << "' has no memory slot";
      t.arena_offset = slot->second.offset;
    }
    p.tensors.push_back(std::move(t));
    return index[v] = static_cast<int32_t>(p.tensors.size() - 1);
  };
  for (const graph::Value *v : graph.inputs()) p.inputs.push_back(tensor_of(v));
  bool quantized = false;
  for (const graph::Node *node : graph.nodes()) {
    isa::PackageStep s;
    s.op = graph::op_name(node->op);
    s.name = node->name;
    s.target =
        node->target == graph::Target::kAccel ? isa::StepTarget::kAccel : isa::StepTarget::kCpu;
    for (const graph::Value *v : node->inputs) s.inputs.push_back(tensor_of(v));
    for (const graph::Value *v : node->outputs) s.outputs.push_back(tensor_of(v));
    s.attrs = attrs_json(node->attrs, p);
    s.macs = graph::count_macs(*node);
    // Nodes that pack_layout never saw (CPU steps, float models) are not padded.
    s.model_macs = node->model_macs.value_or(s.macs);
    quantized |= node->op == graph::OpKind::kQuantizeLinear;
    p.steps.push_back(std::move(s));
  }
  for (const graph::Value *v : graph.outputs()) p.outputs.push_back(tensor_of(v));
  p.quantized = quantized;
  return p;
}

graph::Graph graph_from_package(const isa::Package &p) {
  graph::Graph g;
  g.name = p.model;
  for (const auto &[k, v] : p.metadata.items())
    g.metadata[k] = v.is_string() ? v.get<std::string>() : v.dump();
  std::vector<graph::Value *> values;
  for (const isa::PackageTensor &t : p.tensors) {
    const graph::DType dtype = dtype_from_name(t.dtype);
    graph::Value *v;
    if (t.blob) {
      graph::Tensor tensor(dtype, t.shape);
      const auto &blob = p.blobs.at(*t.blob);
      VACC_CHECK(blob.size() == tensor.nbytes()) << "constant size (package not validated)";
      if (!blob.empty()) std::memcpy(tensor.raw(), blob.data(), blob.size());
      v = g.add_constant(t.name, std::move(tensor));
    } else {
      v = g.add_value(t.name, dtype, t.shape);
    }
    v->frac_bits = t.frac_bits;
    v->zero_point = t.zero_point;
    v->layout = {t.blocked, t.block_n, t.block_c};
    values.push_back(v);
  }
  auto value = [&](int32_t i) { return i < 0 ? nullptr : values.at(i); };
  for (int32_t i : p.inputs) g.add_input(value(i));
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const isa::PackageStep &step = p.steps[s];
    const auto op = graph::op_from_name(step.op);
    if (!op)
      fail("step {} ('{}') has operator '{}', which this vacc does not know: recompile the model",
           s, step.name, step.op);
    std::vector<graph::Value *> ins, outs;
    for (int32_t i : step.inputs) ins.push_back(value(i));
    for (int32_t i : step.outputs) outs.push_back(value(i));
    graph::Node *node = g.add_node(*op, step.name, std::move(ins), std::move(outs),
                                   attrs_from_json(step.attrs, p, step.name));
    node->target =
        step.target == isa::StepTarget::kAccel ? graph::Target::kAccel : graph::Target::kCpu;
  }
  for (int32_t i : p.outputs) g.add_output(value(i));
  return g;
}

}  // namespace vacc::compile
