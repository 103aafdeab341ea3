// The CPU backend's graph-level work on float graphs: the blocked layout chosen once for the
// graph (block_cpu_layout.h: which nodes compute blocked, one pack or unpack per value at the
// borders only), residual adds fused into the convolution before them (fuse_conv_adds.h),
// concatenations written in place by the memory plan (plan_memory.h), and the messages of
// vacc.ConvNCHWc's and the blocked MaxPool's shape inference. The numbers of the blocked
// graphs against the plain ones are held in tests/codegen_cpu/nchwc_kernels_test.cc.
#include "vacc/graph/passes/block_cpu_layout.h"

#include <gtest/gtest.h>

#include <string>

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/fuse_activations.h"
#include "vacc/graph/passes/fuse_conv_adds.h"
#include "vacc/graph/passes/plan_memory.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

using namespace vacc::graph;

namespace {

Value *node(Graph &g, OpKind op, std::vector<Value *> ins, Attributes at = {}) {
  Value *y = g.add_value(g.unique_name("v"), DType::kFloat32, {});
  infer_node(*g.add_node(op, y->name, std::move(ins), {y}, std::move(at)));
  return y;
}

Value *conv(Graph &g, Value *x, int64_t m, int64_t k, int64_t group = 1) {
  Attributes at;
  at.set("pads", std::vector<int64_t>(4, k / 2));
  at.set("group", group);
  Value *w =
      g.add_constant(g.unique_name("w"), Tensor(DType::kFloat32, {m, x->shape[1] / group, k, k}));
  return node(g, OpKind::kConv, {x, w}, at);
}

int count(const Graph &g, OpKind op) {
  int n = 0;
  for (const Node *nd : g.nodes()) n += nd->op == op;
  return n;
}

// A ResNet basic block after a stem and max-pool, then the classifier's pooling and Gemm.
void resnet_like(Graph &g) {
  Value *x = g.add_value("x", DType::kFloat32, {1, 3, 32, 32});
  g.add_input(x);
  Value *s = node(g, OpKind::kRelu, {conv(g, x, 32, 7)});
  Attributes mp;
  mp.set("kernel_shape", std::vector<int64_t>{3, 3});
  mp.set("strides", std::vector<int64_t>{2, 2});
  mp.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Value *p = node(g, OpKind::kMaxPool, {s}, mp);
  Value *a = node(g, OpKind::kRelu, {conv(g, p, 32, 3)});
  Value *r = node(g, OpKind::kRelu, {node(g, OpKind::kAdd, {conv(g, a, 32, 3), p})});
  Value *gap = node(g, OpKind::kGlobalAveragePool, {r});
  Attributes fl;
  fl.set("axis", int64_t{1});
  Value *f = node(g, OpKind::kFlatten, {gap}, fl);
  Value *w = g.add_constant("fc", Tensor(DType::kFloat32, {10, 32}));
  Attributes gm;
  gm.set("transB", int64_t{1});
  g.add_output(node(g, OpKind::kGemm, {f, w}, gm));
}

TEST(BlockCpuLayout, ConvolutionsAndTheOperatorsBetweenThemComputeBlocked) {
  Graph g;
  resnet_like(g);
  // 3 convolutions, MaxPool, 3 Relus, Add, GlobalAveragePool.
  EXPECT_EQ(block_cpu_layout(g, 16), 9);
  EXPECT_EQ(count(g, OpKind::kConvNCHWc), 3);
  EXPECT_EQ(count(g, OpKind::kConv), 0);
  EXPECT_EQ(count(g, OpKind::kPackNCHWnc), 0);    // the 3-channel image is read as it is
  EXPECT_EQ(count(g, OpKind::kUnpackNCHWnc), 1);  // before Flatten, and nowhere else
  for (const Node *n : g.nodes()) {
    if (n->op == OpKind::kConvNCHWc || n->op == OpKind::kMaxPool || n->op == OpKind::kAdd) {
      EXPECT_TRUE(n->outputs[0]->layout.blocked) << n->describe();
      EXPECT_EQ(n->outputs[0]->shape.back(), 16) << n->describe();
    }
  }
  EXPECT_EQ(fuse_conv_adds(g), 1);
  EXPECT_EQ(fuse_activations(g), 3);
  EXPECT_EQ(count(g, OpKind::kAdd), 0);
  EXPECT_EQ(count(g, OpKind::kRelu), 0);
  g.verify();
}

TEST(BlockCpuLayout, AWideGraphInputIsPackedOnceAndOutputsAreUnpacked) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {1, 40, 8, 8});
  g.add_input(x);
  Value *a = conv(g, x, 24, 3), *b = conv(g, x, 24, 1, 1);
  g.add_output(a);
  g.add_output(node(g, OpKind::kAdd, {a, b}));
  block_cpu_layout(g, 16);
  EXPECT_EQ(count(g, OpKind::kPackNCHWnc), 1);    // shared by both convolutions
  EXPECT_EQ(count(g, OpKind::kUnpackNCHWnc), 2);  // one per graph output
  for (const Value *out : g.outputs()) {
    EXPECT_FALSE(out->layout.blocked);
    EXPECT_EQ(out->shape, (Shape{1, 24, 8, 8}));
  }
}

TEST(BlockCpuLayout, GroupedConvolutionsStayPlain) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {1, 32, 8, 8});
  g.add_input(x);
  g.add_output(conv(g, conv(g, x, 32, 3, 4), 32, 3, 32));
  block_cpu_layout(g, 16);
  EXPECT_EQ(count(g, OpKind::kConv), 1);       // 4 groups: plain
  EXPECT_EQ(count(g, OpKind::kConvNCHWc), 1);  // depthwise: blocked
}

TEST(PlanMemory, ConcatenationsAreWrittenInPlace) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {1, 16, 8, 8});
  g.add_input(x);
  Value *s = conv(g, x, 16, 1);
  Value *e1 = conv(g, s, 32, 1), *e3 = conv(g, s, 32, 3);
  Attributes cat;
  cat.set("axis", int64_t{1});
  Value *c = node(g, OpKind::kConcat, {e1, e3}, cat);
  g.add_output(conv(g, c, 16, 1));
  const MemoryPlan plain = plan_memory(g, 64);
  EXPECT_TRUE(plain.in_place.empty());
  const MemoryPlan plan = plan_memory(g, 64, true);
  ASSERT_EQ(plan.in_place.size(), 1u);
  const int64_t at = plan.slots.at(c).offset;
  EXPECT_EQ(plan.slots.at(e1).offset, at);
  EXPECT_EQ(plan.slots.at(e3).offset, at + 32 * 64 * 4);
  EXPECT_LT(plan.arena_bytes, plain.arena_bytes);
  // s is read while e1 and e3 are written: it must not lie in the concatenation.
  const auto &ss = plan.slots.at(s);
  EXPECT_TRUE(ss.offset + ss.bytes <= at || ss.offset >= at + plan.slots.at(c).bytes);
}

TEST(PlanMemory, ConcatenationsOfBatchesOrSharedInputsAreCopied) {
  for (int variant = 0; variant < 2; ++variant) {
    Graph g;
    Value *x = g.add_value("x", DType::kFloat32, {variant == 0 ? 2 : 1, 16, 4, 4});
    g.add_input(x);
    Value *a = conv(g, x, 16, 1), *b = conv(g, x, 16, 1);
    Attributes cat;
    cat.set("axis", int64_t{1});
    g.add_output(node(g, OpKind::kConcat, {a, b}, cat));
    if (variant == 1) g.add_output(node(g, OpKind::kRelu, {a}));  // a has another reader
    EXPECT_TRUE(plan_memory(g, 64, true).in_place.empty()) << variant;
  }
}

void expect_infer_error(Node &n, const std::string &want) {
  try {
    infer_node(n);
    FAIL() << "no error; expected: " << want;
  } catch (const vacc::Error &e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(BlockedShapeInference, Messages) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {1, 2, 6, 6, 1, 16});
  x->layout = {true, 1, 16};
  Value *w = g.add_constant("w", Tensor(DType::kFloat32, {16, 48, 3, 3}));
  Value *y = g.add_value("y", DType::kFloat32, {});
  Attributes a;
  a.set("block_c", int64_t{16});
  Node *n = g.add_node(OpKind::kConvNCHWc, "c", {x, w}, {y}, a);
  expect_infer_error(*n,
                     "input 'x' has 2 channel blocks of 16, the weight 'w' [16,48,3,3] reads "
                     "48 channels");
  n->attrs.set("block_c", int64_t{0});
  expect_infer_error(*n, "attribute 'block_c' must be positive, got 0");
  n->attrs.set("block_c", int64_t{8});
  expect_infer_error(*n, "input 'x' [1,2,6,6,1,16] is not blocked as [N, C/8, H, W, 1, 8]");
  n->attrs.set("block_c", int64_t{16});
  n->inputs[1] = g.add_constant("w2", Tensor(DType::kFloat32, {16, 32, 3, 3}));
  n->attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Value *sum = g.add_value("s", DType::kFloat32, {1, 1, 6, 6, 1, 16});
  n->inputs.resize(4);
  n->inputs[3] = sum;
  expect_infer_error(*n,
                     "the sum 's' f32 [1,1,6,6,1,16] must be float32 blocked like the "
                     "output [1,1,6,6,1,16]");
  sum->layout = {true, 1, 16};
  infer_node(*n);
  EXPECT_EQ(y->shape, (Shape{1, 1, 6, 6, 1, 16}));
  EXPECT_TRUE(y->layout.blocked);

  Value *i = g.add_value("i", DType::kInt64, {});
  Value *m = g.add_value("m", DType::kFloat32, {});
  Attributes mp;
  mp.set("kernel_shape", std::vector<int64_t>{2, 2});
  Node *pool = g.add_node(OpKind::kMaxPool, "p", {y}, {m, i}, mp);
  expect_infer_error(*pool, "a MaxPool on a blocked (NCHWc) input has no Indices output");
}

}  // namespace
