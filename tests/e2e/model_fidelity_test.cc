// Fidelity of whole models against PyTorch: torchvision CNNs, an attention block and a
// transformer encoder layer (seeded random weights, inputs of random structured images or token
// embeddings), exported with their inputs and PyTorch's float outputs by
// tools/export_torchvision.py, which CTest runs once into the build tree (the model_exports
// fixture, build/fidelity-models; $VACC_FIDELITY_MODELS overrides). For each model:
//   - float: vacc's reference executor matches PyTorch to 1e-4 of the output's magnitude;
//   - int8: the package compile_model makes (calibrated on the export's other inputs) runs
//     with its accelerator steps on fsim; on every test input its output has cosine >= 0.99
//     with PyTorch's float output and the same arg-max, and the accelerator runs at least the
//     model's stated share of its MACs, so that fidelity does not come from running in float
//     on the CPU;
//   - lowering: the first input's int8 output equals, bit for bit, the compiler's own int8
//     execution of the same graph (graph::ReferenceExecutor on the pipeline's output). That
//     reference shares compile_model's calibration and quantization code, so it proves lowering and
//     execution, not quantization; the comparison with PyTorch carries quantization.
// Skipped, saying so, when Debian's python3-torch is absent (the export writes TORCH_ABSENT).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "e2e_kit.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/driver/device.h"
#include "vacc/graph/macs.h"
#include "vacc/lower/legality.h"
#include "vacc/runtime/graph_executor.h"

namespace vacc {
namespace {

std::string cache_dir() {
  const char *env = std::getenv("VACC_FIDELITY_MODELS");
  return env ? env : VACC_FIDELITY_MODELS;
}

graph::Tensor npy_tensor(const std::string &path) {
  const NpyArray a = read_npy(path);
  EXPECT_EQ(a.dtype, "f4") << path;
  graph::Tensor t(graph::DType::kFloat32, a.shape);
  std::memcpy(t.raw(), a.data.data(), t.nbytes());
  return t;
}

double cosine(const float *a, const float *b, int64_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < n; ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

int64_t argmax(const float *a, int64_t n) {
  return std::max_element(a, a + n) - a;
}

struct Expectation {
  std::string name;
  double min_accel_mac_share;  // of the model's own MACs
};

void check_model(const Expectation &e) {
  const std::string base = cache_dir() + "/" + e.name;
  if (std::filesystem::exists(cache_dir() + "/TORCH_ABSENT"))
    GTEST_SKIP() << "Debian's python3-torch is absent (" << cache_dir()
                 << "/TORCH_ABSENT): no PyTorch exports to compare with";
  if (!std::filesystem::exists(base + ".onnx"))
    GTEST_SKIP() << base << ".onnx is absent: run tools/export_torchvision.py --out "
                 << cache_dir() << " (CTest's model_exports fixture does)";
  const isa::HwConfig config =
      isa::load_config(std::string(VACC_SOURCE_DIR) + "/configs/default.yaml");
  const graph::Tensor inputs = npy_tensor(base + "_inputs.npy");
  const graph::Tensor outputs = npy_tensor(base + "_outputs.npy");
  const int64_t count = inputs.dim(0), out_size = outputs.size() / count;
  const graph::Shape in_shape(inputs.shape().begin() + 1, inputs.shape().end());
  const NpyArray inputs_npy = read_npy(base + "_inputs.npy");
  const float *want = outputs.data<float>();

  // Float: the reference executor against PyTorch.
  {
    graph::Graph g = graph::import_onnx(base + ".onnx");
    const graph::Tensor got =
        graph::ReferenceExecutor(g).run({test::npy_row(inputs_npy, 0, in_shape)})[0];
    ASSERT_EQ(got.size(), out_size);
    double max_ref = 0, max_err = 0;
    for (int64_t i = 0; i < out_size; ++i) {
      max_ref = std::max(max_ref, std::abs(double(want[i])));
      max_err = std::max(max_err, std::abs(got.as_double(i) - want[i]));
    }
    EXPECT_LE(max_err, 1e-4 * max_ref) << e.name << ": float max abs error " << max_err;
  }

  // int8 on the accelerator (fsim), CPU steps on the reference kernels.
  compile::CompileOptions o;
  o.calibration = base + "_calib.npy";
  const auto t0 = std::chrono::steady_clock::now();
  const compile::CompiledModel m = compile::compile_model(base + ".onnx", config, o);
  const double compile_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto device = driver::open_device("fsim", config);
  host::ReferenceKernels cpu(m.package);
  runtime::GraphExecutor exec(m.package, cpu, device.get(), config);
  runtime::RunProfile profile;
  double worst = 1;
  std::vector<runtime::HostTensor> first;
  for (int64_t i = 0; i < count; ++i) {
    const graph::Tensor x = test::npy_row(inputs_npy, i, in_shape);
    const std::vector<runtime::HostTensor> got = exec.run({test::host(x)}, &profile);
    ASSERT_EQ(got[0].data.size(), size_t(out_size) * 4);
    const float *q = reinterpret_cast<const float *>(got[0].data.data());
    const float *f = want + i * out_size;
    const double c = cosine(q, f, out_size);
    worst = std::min(worst, c);
    EXPECT_GE(c, 0.99) << e.name << " input " << i;
    // Arg-max of the whole output (one row of classes; the encoder's hidden states too).
    EXPECT_EQ(argmax(q, out_size), argmax(f, out_size)) << e.name << " input " << i;
    if (i == 0) first = got;
  }
  const int64_t accel = profile.macs(isa::StepTarget::kAccel);
  const int64_t cpu_macs = profile.macs(isa::StepTarget::kCpu);
  const double share = double(accel) / double(accel + cpu_macs);
  EXPECT_GE(share, e.min_accel_mac_share) << e.name << ": too little runs on the accelerator";
  std::printf(
      "%s: int8 cosine >= %.5f on %lld inputs; %d of %zu steps on the accelerator, %d "
      "host<->accelerator transitions, %.1f%% of MACs on the accelerator; compile %.2f s\n",
      e.name.c_str(), worst, static_cast<long long>(count),
      profile.steps_on(isa::StepTarget::kAccel), profile.steps.size(), profile.transitions(),
      100 * share, compile_s);

  // Lowering: bit for bit against the compiler's own int8 execution of the same graph.
  graph::Graph g = graph::import_onnx(base + ".onnx");
  std::string source;
  graph::PipelineOptions po;
  po.accel_legality = lower::accel_legality(config);
  graph::run_graph_pipeline(g, config, compile::calibration_batches(g, o.calibration, &source), po);
  const graph::Tensor ref =
      graph::ReferenceExecutor(g).run({test::npy_row(inputs_npy, 0, in_shape)})[0];
  ASSERT_EQ(first[0].data.size(), ref.nbytes());
  EXPECT_EQ(std::memcmp(first[0].data.data(), ref.raw(), ref.nbytes()), 0)
      << e.name << ": the package's output differs from the compiler's int8 execution";
}

TEST(ModelFidelity, ResNet18) {
  check_model({"resnet18", 0.99});
}
TEST(ModelFidelity, MobileNetV2) {
  check_model({"mobilenet_v2", 0.9});
}
TEST(ModelFidelity, MobileNetV3Small) {
  check_model({"mobilenet_v3_small", 0.8});
}
TEST(ModelFidelity, GoogLeNet) {
  check_model({"googlenet", 0.99});
}
TEST(ModelFidelity, SqueezeNet) {
  check_model({"squeezenet1_0", 0.99});
}
// Multi-head self-attention and a feed-forward block written out (tools/export_torchvision.py):
// its dense layers over the sequence and both products of activations per head on the
// accelerator, softmax and the residual adds on the CPU.
TEST(ModelFidelity, Attention) {
  check_model({"attention", 0.99});
}
// torch.nn.TransformerEncoderLayer (batch_first, d_model 64, 4 heads, GELU, feed-forward 128,
// 16 tokens) as PyTorch exports it at opset 13: its shape subgraphs fold at import, its layer
// norms and GELU are recognized; the dense layers over the sequence and both products of
// activations per head (all of its MACs) on the accelerator.
TEST(ModelFidelity, TransformerEncoder) {
  check_model({"encoder", 0.99});
}
// Recurrent networks as PyTorch exports them (opset 13, two layers, learned initial states):
// ONNX LSTM, GRU and RNN imported as their equations unrolled over 12 steps; every gate
// product (the whole sequence's input products and each step's hidden-state product) on the
// accelerator, the gates and state updates on the CPU.
TEST(ModelFidelity, Lstm) {
  check_model({"lstm", 0.99});
}
TEST(ModelFidelity, Gru) {
  check_model({"gru", 0.99});
}
TEST(ModelFidelity, Rnn) {
  check_model({"rnn", 0.99});
}

}  // namespace
}  // namespace vacc
