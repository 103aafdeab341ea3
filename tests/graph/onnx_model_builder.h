// Small ONNX models built in code for the error tests: one input x, nodes, initializers and
// attributes, and the importer's message for a model it refuses.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <random>
#include <string>
#include <vector>

#include "vacc/graph/onnx_import.h"
#include "vacc/support/error.h"

namespace vacc::graph::test {

inline onnx::ModelProto model_with_input(int opset, int elem_type = onnx::TensorProto::FLOAT,
                                         std::vector<int64_t> dims = {1, 3, 8, 8}) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto *op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  auto *g = m.mutable_graph();
  g->set_name("g");
  auto *in = g->add_input();
  in->set_name("x");
  auto *tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  return m;
}

inline onnx::NodeProto *add_node(onnx::ModelProto &m, const std::string &op,
                                 const std::string &name, std::vector<std::string> inputs,
                                 const std::string &output = "y") {
  auto *n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto &i : inputs) n->add_input(i);
  n->add_output(output);
  m.mutable_graph()->add_output()->set_name(output);
  return n;
}

// A float initializer of `dims`, its `count` values to be added by the caller.
inline onnx::TensorProto *float_initializer(onnx::ModelProto &m, const std::string &name,
                                            const std::vector<int64_t> &dims, int64_t *count) {
  auto *t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  *count = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    *count *= d;
  }
  return t;
}

inline void add_initializer(onnx::ModelProto &m, const std::string &name,
                            std::vector<int64_t> dims) {
  int64_t n = 0;
  auto *t = float_initializer(m, name, dims, &n);
  for (int64_t i = 0; i < n; ++i) t->add_float_data(0.5f);
}

// A float initializer of `dims` drawn uniformly from [-scale, scale) with `seed`.
inline void add_random_initializer(onnx::ModelProto &m, const std::string &name,
                                   std::vector<int64_t> dims, uint32_t seed, float scale) {
  int64_t n = 0;
  auto *t = float_initializer(m, name, dims, &n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < n; ++i) t->add_float_data(u(rng));
}

inline std::string import_error(const onnx::ModelProto &m) {
  try {
    import_onnx_bytes(m.SerializeAsString(), "model.onnx");
  } catch (const vacc::Error &e) {
    return e.what();
  }
  return "<no error>";
}

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << text

// One more graph input, of element type `elem_type` (onnx::TensorProto's).
inline void add_graph_input(onnx::ModelProto &m, const std::string &name, int elem_type,
                            std::vector<int64_t> dims) {
  auto *s = m.mutable_graph()->add_input();
  s->set_name(name);
  s->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  for (int64_t d : dims)
    s->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
}

inline void add_int64_input(onnx::ModelProto &m, const std::string &name,
                            std::vector<int64_t> dims) {
  add_graph_input(m, name, onnx::TensorProto::INT64, std::move(dims));
}

inline void add_ints(onnx::NodeProto *n, const std::string &name, std::vector<int64_t> values) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

inline void add_int(onnx::NodeProto *n, const std::string &name, int64_t value) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

inline void add_int64_initializer(onnx::ModelProto &m, const std::string &name,
                                  std::vector<int64_t> values) {
  auto *t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

inline void add_float_initializer(onnx::ModelProto &m, const std::string &name,
                                  std::vector<float> values) {
  auto *t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}

inline void add_string(onnx::NodeProto *n, const std::string &name, const std::string &value) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

}  // namespace vacc::graph::test
