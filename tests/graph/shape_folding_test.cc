// Shape subgraphs fold at import: the patterns exporters emit for static shapes (PyTorch's
// flatten, reshapes through Shape -> Gather -> Unsqueeze -> Concat, masks from Range and
// ConstantOfShape) become constants, so only the computing nodes remain; the values they fold
// to are checked against what the shapes say, and the graph still runs.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "vacc/graph/onnx_import.h"
#include "vacc/graph/reference_executor.h"

using namespace vacc::graph;

namespace {

class ModelBuilder {
 public:
  explicit ModelBuilder(std::vector<int64_t> x_dims) {
    m_.set_ir_version(8);
    m_.add_opset_import()->set_version(13);
    auto *in = m_.mutable_graph()->add_input();
    in->set_name("x");
    auto *tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : x_dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void ints(const std::string &name, std::vector<int64_t> values, bool scalar = false) {
    auto *t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  onnx::NodeProto *node(const std::string &op, std::vector<std::string> inputs,
                        const std::string &output) {
    auto *n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(output);
    for (const auto &i : inputs) n->add_input(i);
    n->add_output(output);
    return n;
  }
  static void int_attr(onnx::NodeProto *n, const std::string &name, int64_t v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  Graph import(const std::vector<std::string> &outputs) {
    for (const auto &o : outputs) m_.mutable_graph()->add_output()->set_name(o);
    return import_onnx_bytes(m_.SerializeAsString(), "model.onnx");
  }

 private:
  onnx::ModelProto m_;
};

Tensor ramp(const Shape &shape) {
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(i) * 0.5f - 3;
  return t;
}

// torch.flatten(x, 1) at opset 13 with a dynamic batch: Reshape(x, Concat(Unsqueeze(
// Gather(Shape(x), 0)), [-1])).
TEST(ShapeFolding, FlattenPatternFoldsToOneReshape) {
  ModelBuilder b({2, 3, 4, 5});
  b.ints("zero", {0}, true);
  b.ints("axes0", {0});
  b.ints("minus_one", {-1});
  b.node("Shape", {"x"}, "sx");
  b.node("Gather", {"sx", "zero"}, "batch");
  b.node("Unsqueeze", {"batch", "axes0"}, "batch1");
  ModelBuilder::int_attr(b.node("Concat", {"batch1", "minus_one"}, "target"), "axis", 0);
  b.node("Reshape", {"x", "target"}, "y");
  Graph g = b.import({"y"});
  ASSERT_EQ(g.num_nodes(), 1u) << print_graph(g);
  const Node &reshape = *g.nodes()[0];
  EXPECT_EQ(reshape.op, OpKind::kReshape);
  ASSERT_TRUE(reshape.inputs[1]->is_constant());
  EXPECT_EQ(reshape.inputs[1]->constant->to_int_vector(), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(g.outputs()[0]->shape, (Shape{2, 60}));
  Tensor x = ramp({2, 3, 4, 5});
  std::vector<Tensor> y = ReferenceExecutor(g).run({x});
  ASSERT_EQ(y[0].shape(), (Shape{2, 60}));
  EXPECT_EQ(y[0].to_float_vector(), x.to_float_vector());
}

// A mask from positions: Range over the sequence length, compared into a [T, T] identity and
// cast to float. The integer and boolean part folds at import; the float Cast is left to the
// constant folding pass, as every float constant subgraph is.
TEST(ShapeFolding, IdentityMaskFromRangeFolds) {
  ModelBuilder b({1, 3, 3});
  b.ints("one_idx", {1}, true);
  b.ints("zero", {0}, true);
  b.ints("step", {1}, true);
  b.ints("axes0", {0});
  b.ints("axes1", {1});
  b.node("Shape", {"x"}, "sx");
  b.node("Gather", {"sx", "one_idx"}, "seq");
  b.node("Range", {"zero", "seq", "step"}, "pos");
  b.node("Unsqueeze", {"pos", "axes0"}, "row");
  b.node("Unsqueeze", {"pos", "axes1"}, "col");
  b.node("Equal", {"row", "col"}, "diag");
  ModelBuilder::int_attr(b.node("Cast", {"diag"}, "diag_f"), "to", onnx::TensorProto::FLOAT);
  b.node("Add", {"x", "diag_f"}, "y");
  Graph g = b.import({"y"});
  ASSERT_EQ(g.num_nodes(), 2u) << print_graph(g);
  const Node &cast = *g.nodes()[0];
  EXPECT_EQ(cast.op, OpKind::kCast);
  ASSERT_TRUE(cast.inputs[0]->is_constant());
  EXPECT_EQ(cast.inputs[0]->constant->to_int_vector(),
            (std::vector<int64_t>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  Tensor x = ramp({1, 3, 3});
  std::vector<Tensor> y = ReferenceExecutor(g).run({x});
  std::vector<float> want = x.to_float_vector();
  for (int i = 0; i < 3; ++i) want[i * 3 + i] += 1.0f;
  EXPECT_EQ(y[0].to_float_vector(), want);
}

}  // namespace
