// One case per diagnostic of the CPU backend's graph executor: a node the CPU backend cannot
// run is a vacc::Error that names the node, its operator and the reason, never a crash.
#include <gtest/gtest.h>

#include <string>

#include "vacc/graph/graph.h"
#include "vacc/ops/cpu/executor.h"
#include "vacc/support/error.h"

using namespace vacc::graph;

namespace {

// Expects building the executor for g to fail with a message containing `want`.
void expect_error(const Graph &g, const std::string &want) {
  try {
    vacc::ops::cpu::CpuExecutor exec(g);
    FAIL() << "no error; expected: " << want;
  } catch (const vacc::Error &e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(CpuBackendErrors, SoftmaxOfFloat64) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat64, {2, 3});
  Value *y = g.add_value("y", DType::kFloat64, {2, 3});
  g.add_input(x);
  Attributes a;
  a.set("axis", int64_t{1});
  g.add_node(OpKind::kSoftmax, "sm", {x}, {y}, a);
  g.add_output(y);
  expect_error(g,
               "node 'sm' (Softmax): the CPU backend does not support Softmax with a float64 "
               "input (float32 only)");
}

TEST(CpuBackendErrors, PadModeWrap) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {4});
  Value *pads = g.add_constant("pads", Tensor::from_vector<int64_t>({2}, {1, 1}));
  Value *y = g.add_value("y", DType::kFloat32, {6});
  g.add_input(x);
  Attributes a;
  a.set("mode", std::string("wrap"));
  g.add_node(OpKind::kPad, "pad", {x, pads}, {y}, a);
  g.add_output(y);
  expect_error(g, "node 'pad' (Pad): the CPU backend does not support Pad with mode 'wrap'");
}

TEST(CpuBackendErrors, MatMulOfInt8) {
  Graph g;
  Value *a = g.add_value("a", DType::kInt8, {2, 3});
  Value *b = g.add_value("b", DType::kInt8, {3, 2});
  Value *y = g.add_value("y", DType::kInt8, {2, 2});
  g.add_input(a);
  g.add_input(b);
  g.add_node(OpKind::kMatMul, "mm", {a, b}, {y});
  g.add_output(y);
  expect_error(g, "node 'mm' (MatMul): the CPU backend does not support MatMul with an int8 input");
}

TEST(CpuBackendErrors, PadWithComputedPads) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {4});
  Value *pads = g.add_value("pads", DType::kInt64, {2});
  Value *y = g.add_value("y", DType::kFloat32, {6});
  g.add_input(x);
  g.add_input(pads);
  g.add_node(OpKind::kPad, "pad", {x, pads}, {y});
  g.add_output(y);
  expect_error(g,
               "node 'pad' (Pad): the CPU backend does not support Pad with a computed pads "
               "input (it must be a constant)");
}

TEST(CpuBackendErrors, AddOfBools) {
  Graph g;
  Value *a = g.add_value("a", DType::kBool, {3});
  Value *b = g.add_value("b", DType::kBool, {3});
  Value *y = g.add_value("y", DType::kBool, {3});
  g.add_input(a);
  g.add_input(b);
  g.add_node(OpKind::kAdd, "add", {a, b}, {y});
  g.add_output(y);
  expect_error(g, "node 'add' (Add): the CPU backend does not support Add with bool operands");
}

TEST(CpuBackendErrors, ConvOfIntegers) {
  Graph g;
  Value *x = g.add_value("x", DType::kInt32, {1, 1, 3, 3});
  Value *w = g.add_constant("w", Tensor::from_vector<int32_t>({1, 1, 1, 1}, {1}));
  Value *y = g.add_value("y", DType::kInt32, {1, 1, 3, 3});
  g.add_input(x);
  g.add_node(OpKind::kConv, "conv", {x, w}, {y});
  g.add_output(y);
  expect_error(g, "node 'conv' (Conv): the CPU backend does not support Conv with an int32 input");
}

TEST(CpuBackendErrors, QConvWithAFusedResidualAdd) {
  Graph g;
  Value *x = g.add_value("x", DType::kInt8, {1, 16, 3, 3});
  Value *skip = g.add_value("skip", DType::kInt8, {1, 16, 3, 3});
  Value *w = g.add_constant("w", Tensor(DType::kInt8, {16, 16, 1, 1}));
  Value *y = g.add_value("y", DType::kInt8, {1, 16, 3, 3});
  g.add_input(x);
  g.add_input(skip);
  Attributes a;
  a.set("shifts", std::vector<int64_t>{8});
  g.add_node(OpKind::kQConv, "conv", {x, w, nullptr, skip}, {y}, a);
  g.add_output(y);
  expect_error(g,
               "node 'conv' (vacc.QConv): the CPU backend does not support vacc.QConv with a fused "
               "residual add");
}

TEST(CpuBackendErrors, QConvWithAFusedMaxPool) {
  Graph g;
  Value *x = g.add_value("x", DType::kInt8, {1, 16, 5, 5});
  Value *w = g.add_constant("w", Tensor(DType::kInt8, {16, 16, 1, 1}));
  Value *y = g.add_value("y", DType::kInt8, {1, 16, 2, 2});
  g.add_input(x);
  Attributes a;
  a.set("shifts", std::vector<int64_t>{8});
  a.set("pool_kernel_shape", std::vector<int64_t>{3, 3});
  a.set("pool_strides", std::vector<int64_t>{2, 2});
  g.add_node(OpKind::kQConv, "conv", {x, w}, {y}, a);
  g.add_output(y);
  expect_error(g,
               "node 'conv' (vacc.QConv): the CPU backend does not support vacc.QConv with a fused "
               "max pool");
}

TEST(CpuBackendErrors, QAveragePoolOfABlockedInput) {
  Graph g;
  Value *x = g.add_value("x", DType::kInt8, {1, 1, 4, 4, 1, 16});
  x->layout = {true, 1, 16};
  Value *y = g.add_value("y", DType::kInt8, {1, 1, 2, 2, 1, 16});
  y->layout = {true, 1, 16};
  g.add_input(x);
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{2, 2});
  a.set("strides", std::vector<int64_t>{2, 2});
  a.set("scale_bits", int64_t{16});
  a.set("rshift", int64_t{16});
  g.add_node(OpKind::kQAveragePool, "avg", {x}, {y}, a);
  g.add_output(y);
  expect_error(g,
               "node 'avg' (vacc.QAveragePool): the CPU backend does not support "
               "vacc.QAveragePool with a blocked or non-2-D input");
}

}  // namespace

namespace {

// A vacc.ConvNCHWc node (compiler/ops/conv/def_nchwc.cc) as a package could hold it: x [1, C, 6, 6]
// plain or [1, C/16, 6, 6, 1, 16] blocked, w [M, C/group, 3, 3].
Graph blocked_conv(int64_t c, int64_t m, int64_t group, bool blocked, bool constant_w,
                   bool constant_b = true) {
  Graph g;
  Value *x = blocked ? g.add_value("x", DType::kFloat32, {1, (c + 15) / 16, 6, 6, 1, 16})
                     : g.add_value("x", DType::kFloat32, {1, c, 6, 6});
  if (blocked) x->layout = {true, 1, 16};
  g.add_input(x);
  const Shape ws = {m, c / group, 3, 3};
  Value *w = constant_w ? g.add_constant("w", Tensor(DType::kFloat32, ws))
                        : g.add_value("w", DType::kFloat32, ws);
  if (!constant_w) g.add_input(w);
  Value *b = constant_b ? g.add_constant("b", Tensor(DType::kFloat32, {m}))
                        : g.add_value("b", DType::kFloat32, {m});
  if (!constant_b) g.add_input(b);
  Value *y = g.add_value("y", DType::kFloat32, {1, (m + 15) / 16, 6, 6, 1, 16});
  y->layout = {true, 1, 16};
  Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  a.set("group", group);
  a.set("block_c", int64_t{16});
  g.add_node(OpKind::kConvNCHWc, "conv", {x, w, b}, {y}, a);
  g.add_output(y);
  return g;
}

TEST(CpuBackendErrors, BlockedConvWithComputedWeights) {
  expect_error(blocked_conv(16, 16, 1, true, false),
               "node 'conv' (vacc.ConvNCHWc): the CPU backend does not support vacc.ConvNCHWc "
               "with computed weights (they must be a constant)");
}

TEST(CpuBackendErrors, BlockedConvWithComputedBias) {
  expect_error(blocked_conv(16, 16, 1, true, true, false),
               "node 'conv' (vacc.ConvNCHWc): the CPU backend does not support vacc.ConvNCHWc "
               "with a computed bias (it must be a constant)");
}

TEST(CpuBackendErrors, BlockedConvWithGroupsOfPartBlocks) {
  expect_error(blocked_conv(32, 32, 4, true, true),
               "node 'conv' (vacc.ConvNCHWc): the CPU backend does not support vacc.ConvNCHWc "
               "with 4 groups of 8 input channels (one group, depthwise, or groups of whole "
               "16-channel blocks only)");
}

TEST(CpuBackendErrors, DepthwiseBlockedConvOnAPlainInput) {
  expect_error(blocked_conv(16, 16, 16, false, true),
               "node 'conv' (vacc.ConvNCHWc): the CPU backend does not support vacc.ConvNCHWc "
               "with a depthwise kernel on a plain input");
}

}  // namespace
