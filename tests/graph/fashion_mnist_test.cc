// The bundled Fashion-MNIST model end to end through the graph level: the float reference
// executor against PyTorch's logits, the quantized pipeline against the unfused integer
// reference (bit-exact), and the accuracy of float and int8 on the 10k test images read
// from Debian's dataset-fashion-mnist.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "vacc/graph/idx.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/constant_folding.h"
#include "vacc/graph/passes/correct_bias.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/pipeline.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/lower/legality.h"
#include "vacc/support/npy.h"

using namespace vacc::graph;

namespace {

const std::string kModels = std::string(VACC_SOURCE_DIR) + "/models";
const std::string kModel = kModels + "/fashion_mnist_cnn.onnx";

Tensor npy_tensor(const std::string &path) {
  vacc::NpyArray a = vacc::read_npy(path);
  DType dtype = a.dtype == "f4" ? DType::kFloat32 : DType::kInt64;
  EXPECT_TRUE(a.dtype == "f4" || a.dtype == "i8") << path << ": " << a.dtype;
  Tensor t(dtype, a.shape);
  std::memcpy(t.raw(), a.data.data(), t.nbytes());
  return t;
}

Graph load(int64_t batch) {
  ImportOptions options;
  options.dims["N"] = batch;
  return import_onnx(kModel, options);
}

// Rows [begin, begin + count) of an [N, ...] tensor.
Tensor rows(const Tensor &t, int64_t begin, int64_t count) {
  VACC_CHECK(begin + count <= t.dim(0)) << "rows out of range";
  Shape shape = t.shape();
  shape[0] = count;
  Tensor out(t.dtype(), shape);
  int64_t row = t.nbytes() / t.dim(0);
  std::memcpy(out.raw(), t.raw() + begin * row, count * row);
  return out;
}

std::vector<int64_t> argmax_rows(const Tensor &logits) {
  std::vector<int64_t> out;
  int64_t n = logits.dim(0), k = logits.dim(1);
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < k; ++j) {
      if (logits.data<float>()[i * k + j] > logits.data<float>()[i * k + best]) best = j;
    }
    out.push_back(best);
  }
  return out;
}

vacc::isa::HwConfig default_config() {
  return vacc::isa::HwConfig{};
}

// Calibration batches: about 500 of the first training images (never the test set).
std::vector<std::vector<Tensor>> calibration_batches(float mean, float stddev, int64_t batch) {
  Tensor images = read_idx(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz");
  int64_t count = batch * std::max<int64_t>(1, 500 / batch);
  Tensor x = normalize_images(rows(images, 0, count), mean, stddev);
  std::vector<std::vector<Tensor>> batches;
  for (int64_t i = 0; i + batch <= count; i += batch) batches.push_back({rows(x, i, batch)});
  return batches;
}

float metadata_float(const Graph &g, const std::string &key) {
  auto it = g.metadata.find(key);
  EXPECT_NE(it, g.metadata.end()) << key;
  return it == g.metadata.end() ? 0.0f : std::stof(it->second);
}

TEST(FashionMnist, FloatMatchesPyTorch) {
  Tensor samples = npy_tensor(kModels + "/fashion_mnist_samples.npy");
  Tensor want = npy_tensor(kModels + "/fashion_mnist_logits.npy");
  Graph g = load(samples.dim(0));
  Tensor got = ReferenceExecutor(g).run({samples})[0];
  ASSERT_EQ(got.shape(), want.shape());
  double max_ref = 0, max_err = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    max_ref = std::max(max_ref, std::abs(want.as_double(i)));
    max_err = std::max(max_err, std::abs(got.as_double(i) - want.as_double(i)));
  }
  EXPECT_LE(max_err, 1e-4 * max_ref) << "max abs error " << max_err << " of " << max_ref;
  Tensor labels = npy_tensor(kModels + "/fashion_mnist_labels.npy");
  std::vector<int64_t> pred = argmax_rows(got);
  int correct = 0;
  for (size_t i = 0; i < pred.size(); ++i) correct += pred[i] == labels.as_int(i);
  EXPECT_GE(correct, static_cast<int>(0.85 * pred.size()));
}

TEST(FashionMnist, PipelineIsBitExactWithUnfusedIntegerReference) {
  if (!std::filesystem::exists(kFashionMnistDir)) GTEST_SKIP() << "dataset-fashion-mnist missing";
  Tensor samples = npy_tensor(kModels + "/fashion_mnist_samples.npy");
  int64_t n = samples.dim(0);
  Graph reference = load(n);
  float mean = metadata_float(reference, "vacc.mean"),
        stddev = metadata_float(reference, "vacc.std");
  auto calib_data = calibration_batches(mean, stddev, n);
  fold_constants(reference);
  // quantize and correct_bias, unfused, as the pipeline runs them with bias correction on.
  const Calibration calib = calibrate(reference, calib_data);
  ChannelMeans means;
  for (const auto &[v, m] : calib.channel_mean) means[v->name] = m;
  Int8Forms forms;
  quantize(reference, calib, {}, &forms);
  EXPECT_GT(correct_bias(reference, forms, means, calib_data), 0);
  Graph compiled = load(n);
  PipelineOptions po;
  po.quantize_options.correct_bias = true;
  po.accel_legality = vacc::lower::accel_legality(default_config());
  run_graph_pipeline(compiled, default_config(), calib_data, po);

  int accel = 0, fused = 0;
  for (const Node *node : compiled.nodes()) {
    accel += node->target == Target::kAccel;
    fused += node->op == OpKind::kQConv || node->op == OpKind::kQDense;
  }
  EXPECT_EQ(fused, 5) << print_graph(compiled);  // 3 convolutions, 2 dense layers
  EXPECT_EQ(accel, 7) << print_graph(compiled);  // and its 2 max pools (not fused here)
  Tensor a = ReferenceExecutor(reference).run({samples})[0];
  Tensor b = ReferenceExecutor(compiled).run({samples})[0];
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
}

TEST(FashionMnist, Int8WithinHalfAPointOfFloatOnTestSet) {
  if (!std::filesystem::exists(kFashionMnistDir)) GTEST_SKIP() << "dataset-fashion-mnist missing";
  const int64_t batch = 500;
  Graph float_graph = load(batch);
  float mean = metadata_float(float_graph, "vacc.mean");
  float stddev = metadata_float(float_graph, "vacc.std");
  Graph int8_graph = load(batch);
  PipelineOptions po;
  po.accel_legality = vacc::lower::accel_legality(default_config());
  run_graph_pipeline(int8_graph, default_config(), calibration_batches(mean, stddev, batch), po);

  Tensor images = read_idx(std::string(kFashionMnistDir) + "/t10k-images-idx3-ubyte.gz");
  Tensor labels = read_idx(std::string(kFashionMnistDir) + "/t10k-labels-idx1-ubyte.gz");
  ASSERT_EQ(images.dim(0), 10000);
  Tensor x = normalize_images(images, mean, stddev);
  int64_t float_correct = 0, int8_correct = 0, agree = 0;
  double float_s = 0, int8_s = 0;
  for (int64_t i = 0; i < x.dim(0); i += batch) {
    Tensor xb = rows(x, i, batch);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<int64_t> pf = argmax_rows(ReferenceExecutor(float_graph).run({xb})[0]);
    auto t1 = std::chrono::steady_clock::now();
    std::vector<int64_t> pq = argmax_rows(ReferenceExecutor(int8_graph).run({xb})[0]);
    auto t2 = std::chrono::steady_clock::now();
    float_s += std::chrono::duration<double>(t1 - t0).count();
    int8_s += std::chrono::duration<double>(t2 - t1).count();
    for (int64_t j = 0; j < batch; ++j) {
      int64_t label = labels.data<uint8_t>()[i + j];
      float_correct += pf[j] == label;
      int8_correct += pq[j] == label;
      agree += pf[j] == pq[j];
    }
  }
  double float_acc = 100.0 * float_correct / x.dim(0), int8_acc = 100.0 * int8_correct / x.dim(0);
  std::cout << "Fashion-MNIST test set (10000 images): float " << float_acc << "% (" << float_s
            << " s), int8 " << int8_acc << "% (" << int8_s << " s), predictions agree on " << agree
            << "\n";
  // PyTorch's own figure, recorded in the model by tools/train_fashion_mnist.py.
  EXPECT_NEAR(float_acc, metadata_float(float_graph, "vacc.float_accuracy"), 0.011);
  EXPECT_LE(std::abs(float_acc - int8_acc), 0.5);
}

}  // namespace
