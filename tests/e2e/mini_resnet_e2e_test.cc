// A miniature ResNet end to end (tests/e2e/data, made by tools/make_mini_resnet.py): its
// 3-channel 7x7 stem runs folded (im2col into the reduction: a windowed pack on the host, a
// 1x1 convolution over 3*7*7 channels on the accelerator) with its max pool fused, its
// residual add is fused into the block's second convolution, its global average pool is an
// integer average on the accelerator, and the output equals, bit for bit
// on every engine and with both CPU backends, the int8 reference of the same quantized graph
// run entirely by the graph executor's own kernels (no folding, no blocked layout). That
// reference reuses compile_model's calibration and quantization code, so it proves folding,
// fusion, lowering and execution, not quantization; the fidelity tests against PyTorch's
// float outputs (model_fidelity_test.cc) carry quantization.
#include <gtest/gtest.h>

#include <cstring>

#include "e2e_kit.h"
#include "program_kit.h"
#include "vacc/compile/compile_model.h"
#include "vacc/driver/device.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/pipeline.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/host/llvm_kernels.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/npy.h"

namespace vacc {
namespace {

const std::string kData = std::string(VACC_SOURCE_DIR) + "/tests/e2e/data";
const std::string kModel = kData + "/mini_resnet.onnx";
const std::string kCalibration = kData + "/mini_resnet_calib.npy";

graph::Tensor input(int64_t i) {
  static const NpyArray all = read_npy(kData + "/mini_resnet_inputs.npy");
  return test::npy_row(all, i, {1, 3, 32, 32});
}

const isa::PackageStep *step_named(const isa::Package &p, const std::string &op,
                                   const std::string &attr) {
  for (const auto &s : p.steps)
    if (s.op == op && s.attrs.contains(attr)) return &s;
  return nullptr;
}

TEST(MiniResNetE2E, StemFoldedBitExactOnEveryEngine) {
  const isa::HwConfig config = test::config_named("default");
  compile::CompileOptions options;
  options.calibration = kCalibration;
  const isa::Package p = compile::compile_model(kModel, config, options).package;

  // The stem's input is unfolded by the host's pack, and the stem is a 1x1 convolution.
  const isa::PackageStep *im2col = step_named(p, "vacc.PackNCHWnc", "kernel_shape");
  ASSERT_NE(im2col, nullptr) << "no windowed pack: the stem was not folded";
  EXPECT_EQ(im2col->attrs["kernel_shape"]["ints"].get<std::vector<int64_t>>(),
            (std::vector<int64_t>{7, 7}));
  const isa::PackageTensor &cols = p.tensors[im2col->outputs[0]];
  // ceil(3*7*7 / 16) blocks over the 16x16 grid and a copy of its first row and column: the
  // max pool after the stem (3x3, stride 2, padding 1) is the stem's epilogue.
  EXPECT_EQ(cols.shape, (std::vector<int64_t>{1, 10, 17, 17, 1, 16}));
  EXPECT_EQ(im2col->attrs["replicate_pads"]["ints"].get<std::vector<int64_t>>(),
            (std::vector<int64_t>{1, 1, 0, 0}));
  const isa::PackageStep *stem = step_named(p, "vacc.QConv", "pool_kernel_shape");
  ASSERT_NE(stem, nullptr) << "the max pool was not fused";
  EXPECT_EQ(p.tensors[stem->outputs[0]].shape, (std::vector<int64_t>{1, 1, 8, 8, 1, 16}));
  // The global average pool is an integer average on the accelerator.
  const isa::PackageStep *gap = step_named(p, "vacc.QAveragePool", "scale_bits");
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->target, isa::StepTarget::kAccel);
  for (const auto &s : p.steps) EXPECT_NE(s.op, "MaxPool");
  // The block's residual add is the second convolution's epilogue.
  const isa::PackageStep *fused = step_named(p, "vacc.QConv", "residual_rshift");
  ASSERT_NE(fused, nullptr) << "the residual add was not fused";
  EXPECT_EQ(fused->attrs["residual_clip_min"]["int"], 0) << "the ReLU after the add";
  for (const auto &s : p.steps) EXPECT_NE(s.op, "vacc.QAdd");

  std::vector<graph::Tensor> want;
  // The same calibration and quantization, every node on the CPU in plain NCHW.
  for (int64_t i = 0; i < 2; ++i)
    want.push_back(test::int8_reference(kModel, kCalibration, config, input(i)));
  for (const std::string &engine : test::test_engines()) {
    for (const char *cpu : {"reference", "llvm"}) {
      std::unique_ptr<runtime::HostKernels> kernels;
      if (std::string(cpu) == "llvm")
        kernels = std::make_unique<host::LlvmKernels>(p);
      else
        kernels = std::make_unique<host::ReferenceKernels>(p);
      auto device = driver::open_device(engine, config);
      runtime::GraphExecutor exec(p, *kernels, device.get(), config);
      for (int64_t i = 0; i < 2; ++i) {
        runtime::RunProfile profile;
        const auto got = exec.run({test::host(input(i))}, &profile);
        ASSERT_EQ(got[0].data.size(), want[i].nbytes());
        EXPECT_EQ(std::memcmp(got[0].data.data(), want[i].raw(), want[i].nbytes()), 0)
            << engine << ", CPU " << cpu << ", input " << i;
        int convs_on_accel = 0;
        for (size_t k = 0; k < profile.steps.size(); ++k) {
          const runtime::StepProfile &s = profile.steps[k];
          convs_on_accel += s.where == isa::StepTarget::kAccel && s.op == "vacc.QConv";
          // The device counts the MACs it executes: the fused stem's tiles recompute the
          // convolution outputs their overlapping pool windows share, beyond the layer's count.
          if (&p.steps[k] == stem) {
            EXPECT_GT(s.executed_macs, p.steps[k].macs) << engine;
          }
        }
        EXPECT_EQ(convs_on_accel, 3) << "the folded stem and the block's two convolutions";
      }
    }
  }
}

// Exact weight scales (--weight-scales exact): every convolution's requantization multiplies by
// a per-channel multiplier, the residual and pool fusions still apply, and every engine equals
// the int8 reference of the same quantized graph bit for bit.
TEST(MiniResNetE2E, ExactWeightScalesBitExactOnEveryEngine) {
  const isa::HwConfig config = test::config_named("default");
  compile::CompileOptions options;
  options.calibration = kCalibration;
  options.quantize_options.exact_weight_scales = true;
  const isa::Package p = compile::compile_model(kModel, config, options).package;
  int multiplied = 0;
  for (const auto &s : p.steps)
    if (s.op == "vacc.QConv") {
      EXPECT_TRUE(s.attrs.contains("multipliers")) << s.name;
      multiplied += s.attrs.contains("multipliers") && s.target == isa::StepTarget::kAccel;
    }
  EXPECT_EQ(multiplied, 3)
      << "the folded stem and the block's two convolutions, on the accelerator";
  ASSERT_NE(step_named(p, "vacc.QConv", "residual_rshift"), nullptr)
      << "the residual add was not fused";
  ASSERT_NE(step_named(p, "vacc.QConv", "pool_kernel_shape"), nullptr)
      << "the max pool was not fused";

  graph::PipelineOptions po;
  po.quantize_options.exact_weight_scales = true;
  for (const std::string &engine : test::test_engines()) {
    auto device = driver::open_device(engine, config);
    host::ReferenceKernels kernels(p);
    runtime::GraphExecutor exec(p, kernels, device.get(), config);
    for (int64_t i = 0; i < 2; ++i) {
      const graph::Tensor want = test::int8_reference(kModel, kCalibration, config, input(i), po);
      const auto got = exec.run({test::host(input(i))});
      ASSERT_EQ(got[0].data.size(), want.nbytes());
      EXPECT_EQ(std::memcmp(got[0].data.data(), want.raw(), want.nbytes()), 0)
          << engine << ", input " << i;
    }
  }
}

}  // namespace
}  // namespace vacc
