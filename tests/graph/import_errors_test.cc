// One case per diagnostic of the ONNX importer and the executor's input checks: each bad
// input gives a vacc::Error whose message names the file, the node (name, index, op type)
// where one is at fault, and the reason.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "onnx_model_builder.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/reference_executor.h"

using namespace vacc::graph;
using namespace vacc::graph::test;

namespace {

TEST(ImportErrors, UnsupportedOperator) {
  auto m = model_with_input(13);
  add_node(m, "Det", "det", {"x"});
  std::string e = import_error(m);
  EXPECT_HAS(e, "model.onnx: node 'det' (#0, Det)");
  EXPECT_HAS(e, "unsupported operator 'Det'");
  EXPECT_HAS(e, "Conv");  // lists what is supported
}

TEST(ImportErrors, MalformedFile) {
  try {
    import_onnx_bytes(std::string("\xff\xff\xff garbage", 11), "broken.onnx");
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_HAS(e.what(), "broken.onnx: not a valid ONNX model");
  }
}

TEST(ImportErrors, MissingFile) {
  try {
    import_onnx("/nonexistent/model.onnx");
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_HAS(e.what(), "/nonexistent/model.onnx: cannot open the file");
  }
}

TEST(ImportErrors, ConvChannelMismatch) {
  auto m = model_with_input(13);
  add_initializer(m, "w", {4, 2, 3, 3});
  add_node(m, "Conv", "conv1", {"x", "w"});
  std::string e = import_error(m);
  EXPECT_HAS(e, "node 'conv1' (#0, Conv)");
  EXPECT_HAS(e, "input channels 3 do not match weight 'w' [4,2,3,3]");
}

TEST(ImportErrors, GemmInnerDimensionMismatch) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {2, 5});
  add_initializer(m, "b", {6, 4});
  add_node(m, "Gemm", "fc", {"x", "b"});
  std::string e = import_error(m);
  EXPECT_HAS(e, "node 'fc' (#0, Gemm)");
  EXPECT_HAS(e, "inner dimensions differ");
}

TEST(ImportErrors, BroadcastMismatch) {
  auto m = model_with_input(13);
  add_initializer(m, "c", {5});
  add_node(m, "Add", "add", {"x", "c"});
  EXPECT_HAS(import_error(m), "node 'add' (#0, Add): shapes [1,3,8,8] and [5] cannot be broadcast");
}

TEST(ImportErrors, BadAttributeLength) {
  auto m = model_with_input(13);
  add_initializer(m, "w", {4, 3, 3, 3});
  add_ints(add_node(m, "Conv", "conv1", {"x", "w"}), "strides", {2});
  EXPECT_HAS(import_error(m), "attribute 'strides' has 1 values, expected 2");
}

// Found by the onnx fuzzer: an output_shape with fewer values than spatial dimensions was
// read past its end.
TEST(ImportErrors, ConvTransposeOutputShapeOfTheWrongLength) {
  auto m = model_with_input(13);
  add_initializer(m, "w", {3, 4, 3, 3});
  add_ints(add_node(m, "ConvTranspose", "up", {"x", "w"}), "output_shape", {16});
  EXPECT_HAS(import_error(m),
             "node 'up' (#0, ConvTranspose): attribute 'output_shape' has 1 values, expected 2");
}

// Window attributes are bounded so that the output's geometry cannot overflow 64 bits.
TEST(ImportErrors, StrideOutOfRange) {
  auto m = model_with_input(13);
  add_initializer(m, "w", {4, 3, 3, 3});
  add_ints(add_node(m, "Conv", "conv1", {"x", "w"}), "strides", {1, int64_t{1} << 62});
  EXPECT_HAS(import_error(m), "node 'conv1' (#0, Conv): attribute 'strides' value "
                              "4611686018427387904 is out of range [1, 2147483647]");
}

// Found by the onnx fuzzer: a node without outputs reached constant folding, whose kernels
// write their first output. (A node with no outputs at all is refused by its operator's
// output count.)
TEST(ImportErrors, NodeWithoutOutputs) {
  auto m = model_with_input(13);
  auto *n = add_node(m, "Relu", "r", {"x"});
  n->set_output(0, "");
  EXPECT_HAS(import_error(m), "node 'r' (#0, Relu): the node has no first output (name it: "
                              "every operator produces one)");
}

// Found by the onnx fuzzer: a Shape node naming a second output, which a graph output then
// read, though no kernel writes it. Counts are checked against ONNX's schema.
TEST(ImportErrors, MoreOutputsThanTheOperatorHas) {
  auto m = model_with_input(13);
  auto *n = add_node(m, "Shape", "s", {"x"});
  n->add_output("extra");
  EXPECT_HAS(import_error(m),
             "node 's' (#0, Shape): Shape takes 1 outputs at opset 13, the node has 2");
}

TEST(ImportErrors, FewerInputsThanTheOperatorNeeds) {
  auto m = model_with_input(13);
  add_node(m, "Add", "add", {"x"});
  EXPECT_HAS(import_error(m), "node 'add' (#0, Add): Add takes 2 inputs at opset 13, the node "
                              "has 1");
}

// --batch on a model exported with a fixed batch was ignored: the model ran at its own.
TEST(ImportErrors, BatchAskedOfAFixedBatchModel) {
  auto m = model_with_input(13);
  add_node(m, "Relu", "r", {"x"});
  ImportOptions o;
  o.batch = 2;
  try {
    import_onnx_bytes(m.SerializeAsString(), "model.onnx", o);
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_HAS(e.what(), "model.onnx: a batch of 2 was asked for, but every graph input's first "
                         "dimension is fixed (input 'x' is [1,3,8,8])");
  }
}

// A model exported at exactly the batch asked for (an input of batch 4 given to a model whose
// first dimension is fixed at 4) runs at it; it was refused as if the batch went nowhere.
TEST(ImportErrors, BatchAskedOfAModelFixedAtThatBatch) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {4, 3, 8, 8});
  add_node(m, "Relu", "r", {"x"});
  ImportOptions o;
  o.batch = 4;
  o.input_shape = {4, 3, 8, 8};
  const Graph g = import_onnx_bytes(m.SerializeAsString(), "model.onnx", o);
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.inputs()[0]->shape, (Shape{4, 3, 8, 8}));
  // Another batch is still refused.
  o.batch = 2;
  o.input_shape = {2, 3, 8, 8};
  try {
    import_onnx_bytes(m.SerializeAsString(), "model.onnx", o);
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_HAS(e.what(), "model.onnx: a batch of 2 was asked for, but every graph input's first "
                         "dimension is fixed (input 'x' is [4,3,8,8])");
  }
}

TEST(ImportErrors, UndefinedInput) {
  auto m = model_with_input(13);
  add_node(m, "Relu", "r", {"nowhere"});
  std::string e = import_error(m);
  EXPECT_HAS(e, "node 'r' (#0, Relu): input 0 'nowhere' is not a graph input");
}

TEST(ImportErrors, OpsetTooNew) {
  auto m = model_with_input(18);
  add_node(m, "Relu", "r", {"x"});
  EXPECT_HAS(import_error(m),
             "model.onnx: node 'r' (#0, Relu): opset 18 is outside vacc's supported range 1-17 "
             "for Relu");
}

// An operator in a model older than the opset that introduced it.
TEST(ImportErrors, OpsetBeforeTheOperatorExists) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {2, 8});
  add_initializer(m, "scale", {8});
  add_node(m, "LayerNormalization", "ln", {"x", "scale"});
  EXPECT_HAS(import_error(m),
             "node 'ln' (#0, LayerNormalization): opset 13 is outside vacc's supported range "
             "17-17 for LayerNormalization");
}

TEST(ImportErrors, UnsupportedElementType) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT16);
  add_node(m, "Relu", "r", {"x"});
  EXPECT_HAS(import_error(m), "graph input 'x' has element type FLOAT16");
}

TEST(ImportErrors, DynamicReshapeShape) {
  auto m = model_with_input(13);
  add_int64_input(m, "shape", {2});
  add_node(m, "Reshape", "reshape", {"x", "shape"});
  std::string e = import_error(m);
  EXPECT_HAS(e, "node 'reshape' (#0, Reshape)");
  EXPECT_HAS(e, "not known at compile time");
  EXPECT_HAS(e, "graph input 'shape'");
}

// A target shape whose product overflows 64 bits (found by the onnx fuzzer: undefined
// behaviour before) is refused by name, not compared after wrapping.
TEST(ImportErrors, ReshapeTargetOverflowing64Bits) {
  auto m = model_with_input(13);
  add_int64_initializer(m, "target", {15, INT64_MAX});
  add_node(m, "Reshape", "reshape", {"x", "target"});
  EXPECT_HAS(import_error(m), "node 'reshape' (#0, Reshape): shape [15,9223372036854775807] has "
                              "more elements than 64 bits count");
}

// The static part of the shape folds (Shape, Slice); the part computed from a graph input's
// data cannot, and the error names that input.
TEST(ImportErrors, ShapeComputedFromDataNamesTheInput) {
  auto m = model_with_input(13);
  add_int64_input(m, "k", {1});
  add_node(m, "Shape", "shape_of_x", {"x"}, "sx");
  auto *starts = m.mutable_graph()->add_initializer();
  starts->set_name("zero");
  starts->set_data_type(onnx::TensorProto::INT64);
  starts->add_dims(1);
  starts->add_int64_data(0);
  auto *ends = m.mutable_graph()->add_initializer();
  ends->set_name("two");
  ends->set_data_type(onnx::TensorProto::INT64);
  ends->add_dims(1);
  ends->add_int64_data(2);
  add_node(m, "Slice", "lead", {"sx", "zero", "two"}, "lead_dims");
  auto *concat = add_node(m, "Concat", "target", {"lead_dims", "k"}, "target_shape");
  auto *axis = concat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  add_node(m, "Reshape", "reshape", {"x", "target_shape"});
  std::string e = import_error(m);
  EXPECT_HAS(e, "node 'reshape' (#3, Reshape)");
  EXPECT_HAS(e, "input 'target_shape' (shape)");
  EXPECT_HAS(e, "graph input 'k'");
}

TEST(ImportErrors, CastToAnUnsupportedType) {
  auto m = model_with_input(13);
  auto *n = add_node(m, "Cast", "to_half", {"x"});
  auto *to = n->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT16);
  std::string e = import_error(m);
  EXPECT_HAS(e, "node 'to_half' (#0, Cast)");
  EXPECT_HAS(e, "attribute 'to' is element type 10, which vacc does not carry");
}

// A Gather of constants folds at import; an index out of range is caught there.
TEST(ImportErrors, FoldedGatherIndexOutOfRange) {
  auto m = model_with_input(13);
  add_node(m, "Shape", "shape_of_x", {"x"}, "sx");
  auto *idx = m.mutable_graph()->add_initializer();
  idx->set_name("idx");
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_int64_data(7);
  add_node(m, "Gather", "pick", {"sx", "idx"});
  std::string e = import_error(m);
  EXPECT_HAS(e, "node 'pick' (#1, Gather)");
  EXPECT_HAS(e, "index 7 is out of range for axis 0 of size 4");
}

TEST(ImportErrors, UnknownDomain) {
  auto m = model_with_input(13);
  add_node(m, "Relu", "r", {"x"})->set_domain("com.example");
  EXPECT_HAS(import_error(m), "operator domain 'com.example' is not supported");
}

TEST(ImportErrors, TrainingDropout) {
  auto m = model_with_input(13);
  auto *ratio = m.mutable_graph()->add_initializer();
  ratio->set_name("ratio");
  ratio->set_data_type(onnx::TensorProto::FLOAT);
  ratio->add_float_data(0.5f);
  auto *mode = m.mutable_graph()->add_initializer();
  mode->set_name("mode");
  mode->set_data_type(onnx::TensorProto::BOOL);
  mode->add_int32_data(1);
  add_node(m, "Dropout", "drop", {"x", "ratio", "mode"});
  EXPECT_HAS(import_error(m), "Dropout in training mode drops random elements");
}

TEST(ImportErrors, TruncatedInitializer) {
  auto m = model_with_input(13);
  auto *t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_raw_data(std::string(7, '\0'));
  add_node(m, "Add", "add", {"x", "w"});
  EXPECT_HAS(import_error(m), "initializer 'w' has 7 bytes of raw data, expected 16");
}

TEST(ImportErrors, ReductionAxisGivenTwice) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {2, 3, 4});
  add_ints(add_node(m, "ReduceMean", "mean", {"x"}), "axes", {1, -2});
  EXPECT_HAS(import_error(m), "node 'mean' (#0, ReduceMean): axis 1 is reduced twice");
}

TEST(ImportErrors, ReductionOfBooleans) {
  auto m = model_with_input(13, onnx::TensorProto::BOOL, {2, 3});
  add_node(m, "ReduceMax", "max", {"x"});
  EXPECT_HAS(import_error(m), "node 'max' (#0, ReduceMax): input 'x' is bool, expected a number");
}

TEST(ImportErrors, ReduceSumAxesOfTheWrongType) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {2, 3});
  auto *t = m.mutable_graph()->add_initializer();
  t->set_name("axes");
  t->set_data_type(onnx::TensorProto::INT32);
  t->add_dims(1);
  t->add_int32_data(1);
  add_node(m, "ReduceSum", "sum", {"x", "axes"});
  EXPECT_HAS(import_error(m), "node 'sum' (#0, ReduceSum): axes 'axes' must be int64");
}

// A scale whose broadcast with the normalized shape [8] would add an axis.
TEST(ImportErrors, LayerNormalizationScaleOfAnotherShape) {
  auto m = model_with_input(17, onnx::TensorProto::FLOAT, {2, 8});
  add_initializer(m, "scale", {2, 8});
  add_node(m, "LayerNormalization", "ln", {"x", "scale"});
  EXPECT_HAS(import_error(m),
             "node 'ln' (#0, LayerNormalization): input 'scale' has shape [2,8], which does not "
             "broadcast to the normalized shape [8]");
}

TEST(ImportErrors, LayerNormalizationStashType) {
  auto m = model_with_input(17, onnx::TensorProto::FLOAT, {2, 8});
  add_initializer(m, "scale", {8});
  add_int(add_node(m, "LayerNormalization", "ln", {"x", "scale"}), "stash_type", 11);
  EXPECT_HAS(import_error(m), "attribute 'stash_type' is 11; vacc computes the statistics in float");
}

// x: [batch, seq, 8] with symbolic batch and seq.
onnx::ModelProto model_with_symbolic_input() {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {});
  auto *shape =
      m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  shape->add_dim()->set_dim_param("seq");
  shape->add_dim()->set_dim_value(8);
  add_node(m, "Relu", "r", {"x"});
  return m;
}

// A symbolic dimension other than 0 is not silently given the batch: the error names the graph
// input, the dimension and how to bind it.
TEST(ImportErrors, UnboundSymbolicDimensionNamesTheInputAndDimension) {
  const std::string e = import_error(model_with_symbolic_input());
  EXPECT_HAS(e,
             "model.onnx: graph input 'x' has a symbolic dimension 1 ('seq') that nothing "
             "binds, and vacc's shapes are static: give the input's shape");
  EXPECT_HAS(e, "--input X.npy");
}

TEST(ImportErrors, InputShapeOfTheWrongRankIsRefused) {
  ImportOptions o;
  o.input_shape = {2, 8};
  try {
    import_onnx_bytes(model_with_symbolic_input().SerializeAsString(), "model.onnx", o);
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_HAS(e.what(),
               "model.onnx: graph input 'x' has rank 3, but the input given for it "
               "has shape [2,8]");
  }
}

// Dimension 0 takes the batch; the given input's shape binds every symbolic dimension; a name
// in `dims` binds that dimension.
TEST(ImportSymbolicDims, BatchInputShapeAndNamesBindThem) {
  const std::string bytes = model_with_symbolic_input().SerializeAsString();
  ImportOptions shaped;
  shaped.input_shape = {3, 5, 8};
  EXPECT_EQ(import_onnx_bytes(bytes, "m", shaped).inputs()[0]->shape, (Shape{3, 5, 8}));
  ImportOptions named;
  named.batch = 4;
  named.dims["seq"] = 7;
  EXPECT_EQ(import_onnx_bytes(bytes, "m", named).inputs()[0]->shape, (Shape{4, 7, 8}));
}

// Resource bounds (support/limits.h): a claimed shape is refused before anything is allocated,
// with a message naming the tensor.
TEST(ImportErrors, HugeGraphInputIsRefusedBeforeAllocating) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {1, 1 << 20, 1 << 20, 1 << 10});
  add_node(m, "Relu", "r", {"x"});
  const std::string e = import_error(m);
  EXPECT_HAS(e, "model.onnx: graph input 'x': shape [1,1048576,1048576,1024] needs more than");
  EXPECT_HAS(e, "the limit on one tensor");
}

TEST(ImportErrors, InitializerWhoseShapeOverflowsIsRefused) {
  auto m = model_with_input(13);
  auto *t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 3; ++i) t->add_dims(int64_t{1} << 30);  // 2^90 elements: overflows
  add_node(m, "Add", "add", {"x", "w"});
  EXPECT_HAS(import_error(m), "initializer 'w': shape [1073741824,1073741824,1073741824] needs");
}

TEST(ImportErrors, HugeInferredOutputNamesTheNodeAndTensor) {
  // Two inputs within the limit whose broadcast sum is not: 2^16 x 2^16 floats = 16 GiB.
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {65536, 1});
  add_graph_input(m, "z", onnx::TensorProto::FLOAT, {1, 65536});
  add_node(m, "Add", "outer", {"x", "z"}, "sum");
  const std::string e = import_error(m);
  EXPECT_HAS(e, "node 'outer' (#0, Add)");
  EXPECT_HAS(e, "output 'sum': shape [65536,65536] needs more than");
}

TEST(ExecutorErrors, WrongInputShape) {
  auto m = model_with_input(13);
  add_node(m, "Relu", "r", {"x"});
  Graph g = import_onnx_bytes(m.SerializeAsString(), "model.onnx");
  try {
    ReferenceExecutor(g).run({Tensor(DType::kFloat32, {1, 3, 4, 4})});
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_HAS(e.what(), "input 'x' expects f32[1,3,8,8], got f32[1,3,4,4]");
  }
}

}  // namespace
