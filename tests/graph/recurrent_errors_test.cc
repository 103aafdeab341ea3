// One test per diagnostic of the recurrent operators' import (recurrent_import.h): each names
// the node and what is not supported or does not fit.
#include "onnx_model_builder.h"

namespace vacc::graph::test {
namespace {

// An LSTM over x [5, 1, 4] with hidden size 3: W [1, 12, 4], R [1, 12, 3], B [1, 24].
onnx::ModelProto lstm(std::vector<std::string> inputs = {"x", "w", "r", "b"},
                      std::vector<int64_t> w_dims = {1, 12, 4}) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {5, 1, 4});
  add_initializer(m, "w", w_dims);
  add_initializer(m, "r", {1, 12, 3});
  add_initializer(m, "b", {1, 24});
  auto *n = add_node(m, "LSTM", "lstm", std::move(inputs));
  add_int(n, "hidden_size", 3);
  return m;
}

onnx::NodeProto *node(onnx::ModelProto &m) { return m.mutable_graph()->mutable_node(0); }

void add_strings(onnx::NodeProto *n, const std::string &name, std::vector<std::string> v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const auto &s : v) a->add_strings(s);
}

TEST(RecurrentErrors, UnsupportedAttribute) {
  auto m = lstm();
  auto *a = node(m)->add_attribute();
  a->set_name("clip");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(3);
  EXPECT_HAS(import_error(m), "node 'lstm' (#0, LSTM): attribute 'clip' is not supported "
                              "(direction, hidden_size, activations are)");
}

TEST(RecurrentErrors, BatchFirstLayout) {
  auto m = lstm();
  add_int(node(m), "layout", 1);
  EXPECT_HAS(import_error(m), "layout = 1 (batch first) is not supported");
}

TEST(RecurrentErrors, CoupledInputAndForgetGates) {
  auto m = lstm();
  add_int(node(m), "input_forget", 1);
  EXPECT_HAS(import_error(m), "input_forget = 1 (coupled input and forget gates) is not");
}

TEST(RecurrentErrors, UnknownDirection) {
  auto m = lstm();
  add_string(node(m), "direction", "sideways");
  EXPECT_HAS(import_error(m), "direction 'sideways' must be forward, reverse or bidirectional");
}

TEST(RecurrentErrors, ActivationCount) {
  auto m = lstm();
  add_strings(node(m), "activations", {"Sigmoid"});
  EXPECT_HAS(import_error(m), "activations has 1 names; LSTM takes 3 per direction, 3 here");
}

TEST(RecurrentErrors, UnsupportedActivation) {
  auto m = lstm();
  add_strings(node(m), "activations", {"Sigmoid", "Elu", "Tanh"});
  EXPECT_HAS(import_error(m), "activation 'Elu' is not supported (Sigmoid, Tanh and Relu are)");
}

TEST(RecurrentErrors, SequenceLengthsOfAnotherShape) {
  auto m = lstm({"x", "w", "r", "b", "lens"});
  add_int64_initializer(m, "lens", {5, 5});
  EXPECT_HAS(import_error(m),
             "node 'lstm' (#0, LSTM): input 4 (sequence_lens) is i64 [2]; it must be int32 "
             "[batch] (1)");
}

TEST(RecurrentErrors, SequenceLengthLongerThanTheSequence) {
  auto m = lstm({"x", "w", "r", "b", "lens"});
  add_int64_initializer(m, "lens", {6});
  EXPECT_HAS(import_error(m), "sequence_lens[0] is 6; a length is between 0 and the sequence's 5");
}

TEST(RecurrentErrors, PeepholesOfAnotherShape) {
  auto m = lstm({"x", "w", "r", "b", "", "", "", "p"});
  add_initializer(m, "p", {1, 6});
  EXPECT_HAS(import_error(m), "P is [1,6]; it must be [1,9]");
}

TEST(RecurrentErrors, InputRank) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {5, 4});
  add_initializer(m, "w", {1, 12, 4});
  add_initializer(m, "r", {1, 12, 3});
  add_node(m, "LSTM", "lstm", {"x", "w", "r"});
  EXPECT_HAS(import_error(m), "input X must be [sequence, batch, features]");
}

TEST(RecurrentErrors, MissingRecurrenceWeights) {
  auto m = lstm({"x", "w", ""});
  EXPECT_HAS(import_error(m), "input 2 (R) is missing");
}

TEST(RecurrentErrors, WeightsOfAnotherType) {
  auto m = lstm();
  auto *w = m.mutable_graph()->mutable_initializer(0);
  w->set_data_type(onnx::TensorProto::DOUBLE);
  w->clear_float_data();
  for (int i = 0; i < 48; ++i) w->add_double_data(0.5);
  EXPECT_HAS(import_error(m), "input 1 (W) 'w' is f64, not f32");
}

TEST(RecurrentErrors, WeightShapes) {
  auto m = lstm({"x", "w", "r", "b"}, {1, 12, 5});
  EXPECT_HAS(import_error(m), "W is [1,12,5] and R [1,12,3]; with 1 direction(s), hidden_size "
                              "3 and 4 features they must be [1,12,4] and [1,12,3]");
}

TEST(RecurrentErrors, BiasShape) {
  auto m = lstm({"x", "w", "r", "b2"});
  add_initializer(m, "b2", {1, 12});
  EXPECT_HAS(import_error(m), "B is [1,12]; it must be [1,24]");
}

TEST(RecurrentErrors, InitialStateShape) {
  auto m = lstm({"x", "w", "r", "b", "", "h0"});
  add_initializer(m, "h0", {1, 2, 3});
  EXPECT_HAS(import_error(m), "initial state 'h0' is [1,2,3]; it must be [1,1,3]");
}

}  // namespace
}  // namespace vacc::graph::test
