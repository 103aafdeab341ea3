// A residual block end to end (tests/e2e/data, made by tools/make_residual_model.py): every
// convolution and the dense head run on the accelerator, the residual add fused into the
// convolution producing one of its operands, and the output equals the compiler's own int8
// reference (the add a step of its own, no fusion) on every engine, with both CPU backends.
// The reference runs the same calibration and quantization code as compile_model: this proves
// lowering and execution of the quantized graph, not quantization (a bug there would be in
// both); the fidelity tests against PyTorch's float outputs carry that.
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
#include "vacc/lower/legality.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/npy.h"

namespace vacc {
namespace {

const std::string kData = std::string(VACC_SOURCE_DIR) + "/tests/e2e/data";
const std::string kModel = kData + "/residual_cnn.onnx";
const std::string kCalibration = kData + "/residual_calib.npy";

graph::Tensor input(int64_t i) {
  static const NpyArray all = read_npy(kData + "/residual_inputs.npy");
  return test::npy_row(all, i, {1, 16, 8, 8});
}

// The pipeline with the accelerator's partition (the add a step of its own: no fusion).
graph::Tensor int8_reference(const isa::HwConfig &config, const graph::Tensor &x) {
  graph::PipelineOptions po;
  po.accel_legality = lower::accel_legality(config);
  return test::int8_reference(kModel, kCalibration, config, x, po);
}

TEST(ResidualE2E, AddFusedIntoItsConvolutionBitExactOnEveryEngine) {
  const isa::HwConfig config = test::config_named("default");
  compile::CompileOptions options;
  options.calibration = kCalibration;
  const isa::Package p = compile::compile_model(kModel, config, options).package;
  int fused = 0;
  for (const auto &s : p.steps)
    if (s.op == "vacc.QConv" && s.attrs.contains("residual_rshift")) {
      ++fused;
      EXPECT_EQ(s.inputs.size(), 4u) << "the skip tensor is the convolution's fourth input";
    }
  EXPECT_EQ(fused, 1);
  for (const std::string &engine : test::test_engines()) {
    for (const char *cpu : {"reference", "llvm"}) {
      std::unique_ptr<runtime::HostKernels> kernels;
      if (std::string(cpu) == "llvm") kernels = std::make_unique<host::LlvmKernels>(p);
      else kernels = std::make_unique<host::ReferenceKernels>(p);
      auto device = driver::open_device(engine, config);
      runtime::GraphExecutor exec(p, *kernels, device.get(), config);
      for (int64_t i = 0; i < 2; ++i) {
        const graph::Tensor x = input(i);
        const graph::Tensor want = int8_reference(config, x);
        runtime::RunProfile profile;
        const auto got = exec.run({test::host(x)}, &profile);
        ASSERT_EQ(got[0].data.size(), want.nbytes());
        EXPECT_EQ(std::memcmp(got[0].data.data(), want.raw(), want.nbytes()), 0)
            << engine << ", CPU " << cpu << ", input " << i;
        int adds = 0, on_accel = 0;
        for (const auto &s : profile.steps) {
          on_accel += s.where == isa::StepTarget::kAccel;
          adds += s.op == "vacc.QAdd";
        }
        EXPECT_EQ(adds, 0) << "the residual add is fused into conv2's epilogue";
        EXPECT_EQ(on_accel, 4) << "3 convolutions (one with the add) and the dense head";
      }
    }
  }
}

// The add kept apart (the fusion knob's other value, lower/graph_choices.h, as `vacc tune`
// compiles it and tuned cycles may choose it): an accelerator step of its own, the same bytes
// on every engine.
TEST(ResidualE2E, AddKeptApartIsItsOwnStepBitExactOnEveryEngine) {
  const isa::HwConfig config = test::config_named("default");
  compile::CompileOptions options;
  options.calibration = kCalibration;
  options.use_tuning_db = false;
  options.graph_choices.fuse = lower::GraphChoice::kNever;
  const isa::Package p = compile::compile_model(kModel, config, options).package;
  for (const std::string &engine : test::test_engines()) {
    host::ReferenceKernels kernels(p);
    auto device = driver::open_device(engine, config);
    runtime::GraphExecutor exec(p, kernels, device.get(), config);
    const graph::Tensor x = input(1);
    const graph::Tensor want = int8_reference(config, x);
    runtime::RunProfile profile;
    const auto got = exec.run({test::host(x)}, &profile);
    ASSERT_EQ(got[0].data.size(), want.nbytes());
    EXPECT_EQ(std::memcmp(got[0].data.data(), want.raw(), want.nbytes()), 0) << engine;
    int adds = 0;
    for (const auto &s : profile.steps)
      adds += s.op == "vacc.QAdd" && s.where == isa::StepTarget::kAccel;
    EXPECT_EQ(adds, 1) << engine;
  }
}

}  // namespace
}  // namespace vacc
