// Opt-in (needs tools/export_torchvision.py --out DIR, DIR = $VACC_MODEL_CACHE or the build
// tree's model-cache; skips and says so otherwise): torchvision's ResNet-18, MobileNetV2 and
// SqueezeNet 1.0 compiled as float packages, as `vacc run --float --cpu llvm` and `vacc bench
// model --float` compile them (the CPU's blocked layout, fused convolutions), and run by the
// runtime's graph executor on the LLVM CPU backend. The logits must equal PyTorch's (exported
// beside the model) to 1e-5 of their largest magnitude, and so must their arg-max.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "vacc/compile/compile_model.h"
#include "vacc/host/llvm_kernels.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/npy.h"

namespace vacc {
namespace {

std::string cache_dir() {
  const char *env = std::getenv("VACC_MODEL_CACHE");
  return env ? env : VACC_MODEL_CACHE;
}

int64_t argmax(const float *v, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

void check_model(const std::string &name) {
  const std::string base = cache_dir() + "/" + name;
  if (!std::filesystem::exists(base + ".onnx"))
    GTEST_SKIP() << base << ".onnx is absent: run tools/export_torchvision.py --out "
                 << cache_dir();
  const isa::HwConfig config =
      isa::load_config(std::string(VACC_SOURCE_DIR) + "/configs/default.yaml");
  compile::CompileOptions o;
  o.quantize = false;
  const isa::Package p = compile::compile_model(base + ".onnx", config, o).package;
  int blocked = 0;
  for (const auto &s : p.steps) blocked += s.op == "vacc.ConvNCHWc";
  EXPECT_GT(blocked, 0) << "the float package has no blocked convolution";

  const isa::PackageTensor &in = p.tensors[p.inputs[0]];
  const graph::Tensor x = compile::read_input_npy(base + "_input.npy", in.shape, "the input");
  runtime::HostTensor h;
  h.shape = in.shape;
  h.data.assign(x.raw(), x.raw() + x.nbytes());
  host::LlvmKernels cpu(p);
  runtime::GraphExecutor exec(p, cpu, nullptr, config);
  const auto got = exec.run({h});

  const NpyArray want = read_npy(base + "_output.npy");
  ASSERT_EQ(want.dtype, "f4");
  const int64_t n = static_cast<int64_t>(want.data.size() / 4);
  ASSERT_EQ(static_cast<int64_t>(got[0].data.size()), 4 * n);
  const float *a = reinterpret_cast<const float *>(got[0].data.data());
  const float *b = reinterpret_cast<const float *>(want.data.data());
  double max_ref = 0, max_err = 0;
  for (int64_t i = 0; i < n; ++i) {
    max_ref = std::max(max_ref, std::abs(double(b[i])));
    max_err = std::max(max_err, std::abs(double(a[i]) - double(b[i])));
  }
  std::printf("%s: %d blocked convolutions; max |error| %.3g of max |logit| %.3g\n", name.c_str(),
              blocked, max_err, max_ref);
  EXPECT_LE(max_err, 1e-5 * max_ref);
  EXPECT_EQ(argmax(a, n), argmax(b, n));
}

TEST(TorchvisionFloatCpu, ResNet18EqualsPyTorch) {
  check_model("resnet18");
}
TEST(TorchvisionFloatCpu, MobileNetV2EqualsPyTorch) {
  check_model("mobilenet_v2");
}
TEST(TorchvisionFloatCpu, SqueezeNetEqualsPyTorch) {
  check_model("squeezenet1_0");
}

}  // namespace
}  // namespace vacc
