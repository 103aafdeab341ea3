// A model quantized by its author, end to end: models/fashion_mnist_qdq.onnx (the bundled CNN
// in ONNX Runtime's static QDQ form, uint8 activations with zero points, per-channel int8
// weights, non-power-of-two scales; tools/make_qdq_model.py) compiled with its own scales and
// run with its convolutions and dense layers on fsim, against the numpy evaluation of the QDQ
// arithmetic the same script wrote (models/fashion_mnist_qdq_reference.npy): independent of
// vacc, it is the model's own semantics.
#include <gtest/gtest.h>

#include <cmath>

#include "e2e_kit.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/driver/device.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/runtime/graph_executor.h"

namespace vacc {
namespace {

const std::string kModels = std::string(VACC_SOURCE_DIR) + "/models";

// The scale of the model's output: its final DequantizeLinear's.
double output_scale(const std::string &model) {
  graph::Graph g = graph::import_onnx(model);
  const graph::Node *dq = g.outputs()[0]->producer;
  EXPECT_TRUE(dq && dq->op == graph::OpKind::kDequantizeLinear);
  return dq->inputs[1]->constant->as_double(0);
}

TEST(QdqE2E, OwnScalesOnTheAcceleratorMatchTheQdqArithmetic) {
  const std::string model = kModels + "/fashion_mnist_qdq.onnx";
  const isa::HwConfig config =
      isa::load_config(std::string(VACC_SOURCE_DIR) + "/configs/default.yaml");
  const NpyArray samples = read_npy(kModels + "/fashion_mnist_samples.npy");
  const NpyArray reference = read_npy(kModels + "/fashion_mnist_qdq_reference.npy");
  const int64_t n = samples.shape[0], classes = reference.shape[1];
  compile::CompileOptions o;
  o.batch = n;
  const compile::CompiledModel m = compile::compile_model(model, config, o);
  EXPECT_EQ(m.calibration_source,
            "none: the model's own scales (QuantizeLinear/DequantizeLinear)");
  int accel = 0;
  for (const auto &s : m.package.steps) {
    accel += s.commands.has_value();
    EXPECT_NE(s.op, "Conv") << "a convolution left in float";
    EXPECT_NE(s.op, "Gemm") << "a dense layer left in float";
  }
  EXPECT_EQ(accel, 5) << "three convolutions and two dense layers on the accelerator";

  auto device = driver::open_device("fsim", config);
  host::ReferenceKernels cpu(m.package);
  runtime::GraphExecutor exec(m.package, cpu, device.get(), config);
  const graph::Tensor x = test::npy_row(samples, 0, {n, 1, 28, 28});
  const std::vector<runtime::HostTensor> out = exec.run({test::host(x)});
  ASSERT_EQ(out[0].data.size(), size_t(n * classes * 4));
  const float *got = reinterpret_cast<const float *>(out[0].data.data());
  const float *want = reference.as<float>();
  const double step = output_scale(model);
  int64_t equal = 0, same_class = 0;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < classes; ++k) {
      const double d = std::abs(double(got[i * classes + k]) - want[i * classes + k]) / step;
      worst = std::max(worst, d);
      equal += d < 1e-3;
    }
    same_class += std::max_element(got + i * classes, got + (i + 1) * classes) - got - i * classes ==
                  std::max_element(want + i * classes, want + (i + 1) * classes) - want -
                      i * classes;
  }
  std::printf("QDQ model: %lld of %lld logits equal the QDQ arithmetic, worst %.0f steps apart; "
              "same class on %lld of %lld images\n",
              static_cast<long long>(equal), static_cast<long long>(n * classes), worst,
              static_cast<long long>(same_class), static_cast<long long>(n));
  // Each layer's codes differ from the float arithmetic's only within 1/64 of a step of a
  // rounding tie, by one step (quantize_qdq.h); through five layers such differences move
  // about a tenth of the logits by a step (measured: 2303 of 2560 equal, none further apart,
  // every class the same).
  EXPECT_LE(worst, 2.0);
  EXPECT_GE(equal, n * classes * 85 / 100);
  EXPECT_GE(same_class, n - 2);
}

}  // namespace
}  // namespace vacc
