// The bundled Fashion-MNIST model through the CPU backend's executor against the graph's
// reference executor: the float model to 1e-5 (relative to the largest logit), the int8
// model bit-exact, both as quantized by the graph passes (unfused) and as compiled by the
// whole graph pipeline (fused vacc.QConv/QDense in blocked layout, layout transforms).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "vacc/codegen/cpu/jit.h"
#include "vacc/graph/idx.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/constant_folding.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/pipeline.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/lower/legality.h"
#include "vacc/ops/cpu/executor.h"
#include "vacc/support/npy.h"

using namespace vacc::graph;
using vacc::ops::cpu::CpuExecutor;

namespace {

const std::string kModels = std::string(VACC_SOURCE_DIR) + "/models";

Tensor samples() {
  vacc::NpyArray a = vacc::read_npy(kModels + "/fashion_mnist_samples.npy");
  EXPECT_EQ(a.dtype, "f4");
  Tensor t(DType::kFloat32, a.shape);
  std::memcpy(t.raw(), a.data.data(), t.nbytes());
  return t;
}

Graph load(int64_t batch) {
  ImportOptions options;
  options.dims["N"] = batch;
  return import_onnx(kModels + "/fashion_mnist_cnn.onnx", options);
}

// Calibration batches from the first training images, as the graph tests take them.
std::vector<std::vector<Tensor>> calibration(const Graph &g, int64_t batch) {
  float mean = std::stof(g.metadata.at("vacc.mean")), stddev = std::stof(g.metadata.at("vacc.std"));
  Tensor images = read_idx(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz");
  Shape shape = images.shape();
  shape[0] = batch * 4;
  Tensor head(images.dtype(), shape);
  std::memcpy(head.raw(), images.raw(), head.nbytes());
  Tensor x = normalize_images(head, mean, stddev);
  std::vector<std::vector<Tensor>> batches;
  int64_t row = x.nbytes() / x.dim(0);
  for (int64_t i = 0; i < 4; ++i) {
    Shape s = x.shape();
    s[0] = batch;
    Tensor b(x.dtype(), s);
    std::memcpy(b.raw(), x.raw() + i * batch * row, batch * row);
    batches.push_back({b});
  }
  return batches;
}

void expect_bit_exact(const Graph &g, const Tensor &x) {
  Tensor want = ReferenceExecutor(g).run({x})[0];
  Tensor got = CpuExecutor(g).run({x})[0];
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(std::memcmp(got.raw(), want.raw(), got.nbytes()), 0) << print_graph(g);
}

TEST(CpuFashionMnist, FloatMatchesTheReferenceExecutor) {
  Tensor x = samples();
  Graph g = load(x.dim(0));
  Tensor want = ReferenceExecutor(g).run({x})[0];
  Tensor got = CpuExecutor(g).run({x})[0];
  ASSERT_EQ(got.shape(), want.shape());
  double max_ref = 0, max_err = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    max_ref = std::max(max_ref, std::abs(want.as_double(i)));
    max_err = std::max(max_err, std::abs(got.as_double(i) - want.as_double(i)));
  }
  EXPECT_GT(max_ref, 0.1);
  EXPECT_LE(max_err, 1e-5 * max_ref) << "max abs error " << max_err << " of " << max_ref;
}

TEST(CpuFashionMnist, Int8QuantizedGraphIsBitExact) {
  if (!std::filesystem::exists(kFashionMnistDir)) GTEST_SKIP() << "dataset-fashion-mnist missing";
  Tensor x = samples();
  Graph g = load(x.dim(0));
  auto calib = calibration(g, x.dim(0));
  fold_constants(g);
  quantize(g, calibrate(g, calib));
  expect_bit_exact(g, x);
}

TEST(CpuFashionMnist, Int8CompiledPipelineGraphIsBitExact) {
  if (!std::filesystem::exists(kFashionMnistDir)) GTEST_SKIP() << "dataset-fashion-mnist missing";
  Tensor x = samples();
  Graph g = load(x.dim(0));
  auto calib = calibration(g, x.dim(0));
  PipelineOptions po;
  po.accel_legality = vacc::lower::accel_legality(vacc::isa::HwConfig{});
  run_graph_pipeline(g, vacc::isa::HwConfig{}, calib, po);
  expect_bit_exact(g, x);
}

}  // namespace
