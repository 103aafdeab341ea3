// Graph nodes mapped onto GPU kernels (ops/gpu build_node_kernel, its per-operator table): the
// kernel's loop IR, run sequentially on the CPU backend (the GPU's meaning, codegen/gpu/ptx.h),
// equals the graph reference executor on the node; a node the GPU kernel does not fit is refused
// with the reason, for its caller to run it on the CPU.
#include <gtest/gtest.h>

#include <random>

#include "vacc/codegen/cpu/jit.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/ops/gpu/ops.h"

namespace vacc {
namespace {

using namespace graph;

Tensor random_floats(Shape shape, unsigned seed) {
  Tensor t(DType::kFloat32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2, 2);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// A one-node graph over graph inputs `inputs`, with `outputs` outputs.
struct OneNode {
  Graph g;
  Node *node = nullptr;
  OneNode(OpKind op, const std::vector<Tensor> &inputs, Attributes attrs, int outputs = 1) {
    std::vector<Value *> ins, outs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      ins.push_back(g.add_value("x" + std::to_string(i), inputs[i].dtype(), inputs[i].shape()));
      g.add_input(ins.back());
    }
    for (int k = 0; k < outputs; ++k)
      outs.push_back(g.add_value("y" + std::to_string(k), DType::kFloat32, {}));
    node = g.add_node(op, "op", ins, outs, std::move(attrs));
    infer_node(*node);
    for (Value *y : outs) g.add_output(y);
  }
};

// The node's GPU kernel run sequentially equals the reference on `inputs`.
void expect_kernel_matches(OpKind op, const std::vector<Tensor> &inputs, Attributes attrs,
                           double tolerance) {
  OneNode n(op, inputs, std::move(attrs));
  ops::gpu::GpuNodeKernel k;
  std::string why;
  ASSERT_TRUE(ops::gpu::build_node_kernel(*n.node, &k, &why)) << why;
  const Tensor want = ReferenceExecutor(n.g).run(inputs)[0];
  Tensor got(DType::kFloat32, want.shape());
  std::vector<void *> args;
  for (const Tensor &t : inputs) args.push_back(const_cast<uint8_t *>(t.raw()));
  args.push_back(got.raw());
  codegen::cpu::Jit::global().compile(k.func)->run(args);
  for (int64_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got.as_double(i), want.as_double(i), tolerance * (1 + std::abs(want.as_double(i))))
        << op_name(op) << " element " << i;
}

TEST(GpuNodeKernels, LayerNormalizationOverTrailingAxes) {
  Attributes at;
  at.set("axis", int64_t{1});
  expect_kernel_matches(
      OpKind::kLayerNormalization,
      {random_floats({3, 4, 50}, 1), random_floats({4, 50}, 2), random_floats({4, 50}, 3)}, at,
      1e-4);
  expect_kernel_matches(OpKind::kLayerNormalization,
                        {random_floats({5, 64}, 4), random_floats({64}, 5)}, {}, 1e-4);
}

TEST(GpuNodeKernels, GeluInBothForms) {
  for (const char *form : {"none", "tanh"}) {
    Attributes at;
    at.set("approximate", std::string(form));
    expect_kernel_matches(OpKind::kGelu, {random_floats({7, 33}, 6)}, at, 1e-6);
  }
}

TEST(GpuNodeKernels, SoftmaxOnAnInnerAxis) {
  Attributes at;
  at.set("axis", int64_t{1});
  expect_kernel_matches(OpKind::kSoftmax, {random_floats({2, 10, 3}, 7)}, at, 1e-5);
}

TEST(GpuNodeKernels, RefusesWhatItsKernelsDoNotRunWithTheReason) {
  OneNode ln(OpKind::kLayerNormalization, {random_floats({2, 8}, 8), random_floats({8}, 9)}, {}, 3);
  ops::gpu::GpuNodeKernel k;
  std::string why;
  EXPECT_FALSE(ops::gpu::build_node_kernel(*ln.node, &k, &why));
  EXPECT_NE(why.find("the GPU backend does not run LayerNormalization with the Mean and "
                     "InvStdDev outputs"),
            std::string::npos)
      << why;
  Attributes axes;
  OneNode arg(OpKind::kArgMax, {random_floats({2, 8}, 10)}, axes);
  EXPECT_FALSE(ops::gpu::build_node_kernel(*arg.node, &k, &why));
  EXPECT_NE(why.find("does not run ArgMax with this operator"), std::string::npos) << why;
}

}  // namespace
}  // namespace vacc
