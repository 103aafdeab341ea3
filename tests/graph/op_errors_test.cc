// One case per diagnostic of the operators of the second series (Split, Tile, DepthToSpace,
// SpaceToDepth, Trilu, Resize, CumSum, GlobalMaxPool, Mod, the activations, PRelu and the
// softmax family): each bad model gives a vacc::Error naming the node and the reason.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "onnx_model_builder.h"
#include "vacc/graph/reference_executor.h"

using namespace vacc::graph;
using namespace vacc::graph::test;

namespace {

// x: a scalar (a shape of no dimensions).
onnx::ModelProto model_with_scalar_input(int opset) {
  auto m = model_with_input(opset, onnx::TensorProto::FLOAT, {});
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  return m;
}

TEST(OpErrors, SignOfBooleans) {
  auto m = model_with_input(13, onnx::TensorProto::BOOL, {2, 3});
  add_node(m, "Sign", "sign", {"x"});
  EXPECT_HAS(import_error(m), "node 'sign' (#0, Sign): input 'x' is bool, expected a number");
}

TEST(OpErrors, PReluSlopeWiderThanTheInput) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {2, 3});
  add_initializer(m, "slope", {4, 2, 3});
  add_node(m, "PRelu", "prelu", {"x", "slope"});
  EXPECT_HAS(import_error(m),
             "node 'prelu' (#0, PRelu): slope 'slope' [4,2,3] does not broadcast to the input's "
             "shape [2,3]");
}

TEST(OpErrors, PRelu6SlopeFromData) {
  auto m = model_with_input(6, onnx::TensorProto::FLOAT, {1, 3, 4, 4});
  add_graph_input(m, "slope", onnx::TensorProto::FLOAT, {3});
  add_node(m, "PRelu", "prelu", {"x", "slope"});
  EXPECT_HAS(import_error(m),
             "node 'prelu' (#0, PRelu): PRelu-6's per-channel slope 'slope' must be a constant");
}

TEST(OpErrors, ModOfBooleans) {
  auto m = model_with_input(13, onnx::TensorProto::BOOL, {2});
  add_node(m, "Mod", "mod", {"x", "x"});
  EXPECT_HAS(import_error(m), "node 'mod' (#0, Mod): Mod of booleans");
}

// The softmax family's kernels compute in float32; a double input is refused when it runs.
TEST(OpErrors, LogSoftmaxOfDoubles) {
  auto m = model_with_input(13, onnx::TensorProto::DOUBLE, {2, 3});
  add_node(m, "LogSoftmax", "lsm", {"x"});
  Graph g = import_onnx_bytes(m.SerializeAsString(), "model.onnx");
  try {
    ReferenceExecutor(g).run({Tensor(DType::kFloat64, {2, 3})});
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_HAS(e.what(), "LogSoftmax needs float32 inputs");
  }
}

TEST(OpErrors, SplitOfAScalar) {
  auto m = model_with_scalar_input(13);
  add_node(m, "Split", "split", {"x"});
  EXPECT_HAS(import_error(m), "node 'split' (#0, Split): cannot split a scalar");
}

TEST(OpErrors, SplitSizesFromData) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {4});
  add_int64_input(m, "sizes", {1});
  add_node(m, "Split", "split", {"x", "sizes"});
  EXPECT_HAS(import_error(m),
             "node 'split' (#0, Split): input 'sizes' (split) decides the output's shape but is "
             "not known at compile time");
}

TEST(OpErrors, SplitSizesForTooManyOutputs) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {4});
  add_int64_initializer(m, "sizes", {1, 3});
  add_node(m, "Split", "split", {"x", "sizes"});
  EXPECT_HAS(import_error(m), "node 'split' (#0, Split): split has 2 sizes for 1 outputs");
}

TEST(OpErrors, SplitNegativeSize) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {4});
  add_int64_initializer(m, "sizes", {-1});
  add_node(m, "Split", "split", {"x", "sizes"});
  EXPECT_HAS(import_error(m), "node 'split' (#0, Split): split has a negative size -1");
}

TEST(OpErrors, SplitSizesThatDoNotAddUp) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {4});
  add_int64_initializer(m, "sizes", {3});
  add_node(m, "Split", "split", {"x", "sizes"});
  EXPECT_HAS(import_error(m),
             "node 'split' (#0, Split): split sizes add up to 3, but axis 0 has 4");
}

TEST(OpErrors, SplitIntoUnequalParts) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {5});
  auto *n = add_node(m, "Split", "split", {"x"}, "a");
  n->add_output("b");
  m.mutable_graph()->add_output()->set_name("b");
  EXPECT_HAS(import_error(m),
             "node 'split' (#0, Split): axis 0 of size 5 does not split into 2 equal parts");
}

TEST(OpErrors, TileRepeatsOfTheWrongLength) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {2, 3});
  add_int64_initializer(m, "reps", {2});
  add_node(m, "Tile", "tile", {"x", "reps"});
  EXPECT_HAS(import_error(m),
             "node 'tile' (#0, Tile): repeats has 1 values for an input of rank 2");
}

TEST(OpErrors, TileNegativeRepeats) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {2, 3});
  add_int64_initializer(m, "reps", {1, -2});
  add_node(m, "Tile", "tile", {"x", "reps"});
  EXPECT_HAS(import_error(m), "node 'tile' (#0, Tile): repeats has a negative value -2");
}

TEST(OpErrors, DepthToSpaceBlocksizeNotPositive) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {1, 4, 2, 2});
  add_int(add_node(m, "DepthToSpace", "d2s", {"x"}), "blocksize", 0);
  EXPECT_HAS(import_error(m),
             "node 'd2s' (#0, DepthToSpace): attribute 'blocksize' must be positive, got 0");
}

TEST(OpErrors, DepthToSpaceUnknownMode) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {1, 4, 2, 2});
  auto *n = add_node(m, "DepthToSpace", "d2s", {"x"});
  add_int(n, "blocksize", 2);
  add_string(n, "mode", "RCD");
  EXPECT_HAS(import_error(m),
             "node 'd2s' (#0, DepthToSpace): attribute 'mode' is 'RCD', expected DCR or CRD");
}

TEST(OpErrors, DepthToSpaceOfRank3) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {4, 2, 2});
  add_int(add_node(m, "DepthToSpace", "d2s", {"x"}), "blocksize", 2);
  EXPECT_HAS(import_error(m),
             "node 'd2s' (#0, DepthToSpace): input has rank 3, expected 4 (N, C, H, W)");
}

TEST(OpErrors, DepthToSpaceChannelsNotAMultiple) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {1, 6, 2, 2});
  add_int(add_node(m, "DepthToSpace", "d2s", {"x"}), "blocksize", 2);
  EXPECT_HAS(import_error(m),
             "node 'd2s' (#0, DepthToSpace): 6 channels are not a multiple of blocksize^2 = 4");
}

TEST(OpErrors, SpaceToDepthSizeNotAMultiple) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {1, 1, 3, 4});
  add_int(add_node(m, "SpaceToDepth", "s2d", {"x"}), "blocksize", 2);
  EXPECT_HAS(import_error(m),
             "node 's2d' (#0, SpaceToDepth): height 3 and width 4 must be multiples of "
             "blocksize 2");
}

TEST(OpErrors, TriluOfAVector) {
  auto m = model_with_input(14, onnx::TensorProto::FLOAT, {4});
  add_node(m, "Trilu", "tri", {"x"});
  EXPECT_HAS(import_error(m), "node 'tri' (#0, Trilu): input has rank 1, expected at least 2");
}

TEST(OpErrors, GlobalMaxPoolOfAMatrix) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {2, 3});
  add_node(m, "GlobalMaxPool", "gmp", {"x"});
  EXPECT_HAS(import_error(m),
             "node 'gmp' (#0, GlobalMaxPool): input has rank 2, expected at least 3 (N, C, "
             "spatial...)");
}

TEST(OpErrors, CumSumAxisOfTwoValues) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {2, 3});
  add_int64_initializer(m, "axis", {0, 1});
  add_node(m, "CumSum", "cs", {"x", "axis"});
  EXPECT_HAS(import_error(m),
             "node 'cs' (#0, CumSum): the axis input must be a one-element constant");
}

// Resize(X, roi, scales, sizes) with float scales `scales` (when given).
onnx::ModelProto resize_model(std::vector<int64_t> dims, std::vector<float> scales,
                              int elem_type = onnx::TensorProto::FLOAT) {
  auto m = model_with_input(13, elem_type, dims);
  add_float_initializer(m, "scales", scales);
  add_node(m, "Resize", "resize", {"x", "", "scales"});
  return m;
}

TEST(OpErrors, ResizeUnsupportedMode) {
  auto m = resize_model({1, 1, 2, 2}, {1, 1, 2, 2});
  add_string(m.mutable_graph()->mutable_node(0), "mode", "area");
  EXPECT_HAS(import_error(m),
             "node 'resize' (#0, Resize): attribute 'mode' is 'area'; vacc's Resize supports "
             "nearest, linear, cubic");
}

TEST(OpErrors, ResizeScalesFromData) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {1, 1, 2, 2});
  add_graph_input(m, "scales", onnx::TensorProto::FLOAT, {4});
  add_node(m, "Resize", "resize", {"x", "", "scales"});
  EXPECT_HAS(import_error(m),
             "node 'resize' (#0, Resize): input 'scales' (scales) decides the output's shape but "
             "is not known at compile time");
}

TEST(OpErrors, ResizeCropWithoutAFullRoi) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {1, 1, 2, 2});
  add_float_initializer(m, "roi", {0, 0});
  add_float_initializer(m, "scales", {1, 1, 2, 2});
  auto *n = add_node(m, "Resize", "resize", {"x", "roi", "scales"});
  add_string(n, "coordinate_transformation_mode", "tf_crop_and_resize");
  EXPECT_HAS(import_error(m),
             "node 'resize' (#0, Resize): tf_crop_and_resize needs an roi of 8 values (starts "
             "and ends), got 2");
}

TEST(OpErrors, ResizeOfAScalar) {
  auto m = model_with_scalar_input(13);
  add_float_initializer(m, "scales", {2});
  add_node(m, "Resize", "resize", {"x", "", "scales"});
  EXPECT_HAS(import_error(m), "node 'resize' (#0, Resize): cannot resize a scalar");
}

TEST(OpErrors, ResizeInterpolatingIntegers) {
  auto m = resize_model({1, 1, 2, 2}, {1, 1, 2, 2}, onnx::TensorProto::INT32);
  add_string(m.mutable_graph()->mutable_node(0), "mode", "linear");
  EXPECT_HAS(
      import_error(m),
      "node 'resize' (#0, Resize): mode 'linear' interpolates; the input 'x' is i32, expected "
      "a float type");
}

TEST(OpErrors, ResizeWithNeitherScalesNorSizes) {
  auto m = model_with_input(13, onnx::TensorProto::FLOAT, {1, 1, 2, 2});
  add_node(m, "Resize", "resize", {"x"});
  EXPECT_HAS(import_error(m),
             "node 'resize' (#0, Resize): give exactly one of the scales and sizes inputs "
             "(scales has 0 values, sizes 0)");
}

TEST(OpErrors, ResizeScalesOfTheWrongLength) {
  auto m = resize_model({1, 1, 2, 2}, {2, 2});
  EXPECT_HAS(import_error(m),
             "node 'resize' (#0, Resize): scales has 2 values for an input of rank 4");
}

TEST(OpErrors, ResizeScaleNotPositive) {
  auto m = resize_model({1, 1, 2, 2}, {1, 1, 0, 2});
  EXPECT_HAS(import_error(m),
             "node 'resize' (#0, Resize): scales has a value 0 that is not positive");
}

// Resize-10 has neither roi nor the coordinate transformations: outside its opset range.
TEST(OpErrors, ResizeOfOpset10) {
  auto m = resize_model({1, 1, 2, 2}, {1, 1, 2, 2});
  m.mutable_opset_import(0)->set_version(10);
  EXPECT_HAS(import_error(m), "node 'resize' (#0, Resize)");
  EXPECT_HAS(import_error(m), "11-17 for Resize");
}

}  // namespace
