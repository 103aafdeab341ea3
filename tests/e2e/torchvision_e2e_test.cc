// Opt-in (needs tools/export_torchvision.py --out DIR, DIR = $VACC_MODEL_CACHE or the build
// tree's model-cache; skips and says so otherwise): ResNet-18 and MobileNetV2 compiled into
// packages and run by the runtime's graph executor with the accelerator layers on fsim; the
// result must equal, bit for bit, the compiler's own int8 execution of the same graph
// (graph::Executor on the pipeline's output, computed independently of the package).
// That reference shares compile_model's calibration and quantization code, so this proves
// lowering and execution at the scale of real networks, not quantization; the fidelity tests
// (tests/graph/torchvision_fidelity_test.cc, against PyTorch's float outputs) carry that.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "vacc/driver/device.h"
#include "vacc/graph/executor.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/pipeline.h"
#include "vacc/lower/legality.h"
#include "vacc/package/compile_model.h"
#include "vacc/cli/reference_kernels.h"
#include "vacc/runtime/graph_executor.h"

namespace vacc {
namespace {

std::string cache_dir() {
  const char *env = std::getenv("VACC_MODEL_CACHE");
  return env ? env : VACC_MODEL_CACHE;
}

void check_model(const std::string &name) {
  const std::string base = cache_dir() + "/" + name;
  if (!std::filesystem::exists(base + ".onnx"))
    GTEST_SKIP() << base << ".onnx is absent: run tools/export_torchvision.py --out "
                 << cache_dir();
  const isa::HwConfig config =
      isa::load_config(std::string(VACC_SOURCE_DIR) + "/configs/default.yaml");
  package::CompileOptions o;
  o.calibration = base + "_calib.npy";
  const auto t0 = std::chrono::steady_clock::now();
  const package::CompiledModel m = package::compile_model(base + ".onnx", config, o);
  const double compile_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int accel = 0;
  for (const auto &s : m.package.steps) accel += s.commands.has_value();
  EXPECT_GT(accel, 0);

  const isa::PackageTensor &in = m.package.tensors[m.package.inputs[0]];
  const graph::Tensor x = package::read_input_npy(base + "_input.npy", in.shape, "the input");
  runtime::HostTensor h;
  h.shape = in.shape;
  h.data.assign(x.raw(), x.raw() + x.nbytes());
  auto device = driver::open_device("fsim", config);
  cli::ReferenceKernels cpu(m.package);
  runtime::GraphExecutor exec(m.package, cpu, device.get(), config);
  runtime::RunProfile profile;
  const auto got = exec.run({h}, &profile);

  graph::Graph g = graph::import_onnx(base + ".onnx");
  std::string source;
  graph::PipelineOptions po;
  po.accel_legality = lower::accel_legality(config);
  graph::run_graph_pipeline(g, config, package::calibration_batches(g, o.calibration, &source), po);
  const graph::Tensor want = graph::Executor(g).run({x})[0];
  ASSERT_EQ(got[0].data.size(), want.nbytes());
  EXPECT_EQ(std::memcmp(got[0].data.data(), want.raw(), want.nbytes()), 0);
  std::printf("%s: %d accelerator layers; compile %.2f s, run on fsim %.2f s\n", name.c_str(),
              accel, compile_s, profile.seconds);
}

TEST(TorchvisionE2E, ResNet18BitExactOnFsim) {
  check_model("resnet18");
}
TEST(TorchvisionE2E, MobileNetV2BitExactOnFsim) {
  check_model("mobilenet_v2");
}

}  // namespace
}  // namespace vacc
