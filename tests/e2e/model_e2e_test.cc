// The bundled Fashion-MNIST model end to end: compiled into a package, run by the runtime's
// graph executor with its accelerator layers on each simulator, and held against references:
// the compiler's own int8 execution of the same graph (graph::ReferenceExecutor on the pipeline's
// output, bit for bit), PyTorch's float logits shipped in models/ (float package), and the
// labels (int8 package).
// What the int8 comparison proves, and what it does not: its reference runs the same
// calibration and quantization code as compile_model, so it checks lowering, packaging and
// execution (the accelerator and CPU steps against the graph they came from), not the
// quantization itself; a quantization bug would be in both. Quantization is carried by the
// comparisons with PyTorch's float outputs (the logits here, the fidelity tests) and by the
// labels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "e2e_kit.h"
#include "program_kit.h"
#include "vacc/compile/compile_model.h"
#include "vacc/compile/graph_package.h"
#include "vacc/driver/device.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/pipeline.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/host/reference_check.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/isa/package.h"
#include "vacc/lower/legality.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/npy.h"

namespace vacc {
namespace {

const std::string kModels = std::string(VACC_SOURCE_DIR) + "/models";
const std::string kModel = kModels + "/fashion_mnist_cnn.onnx";

isa::HwConfig config_named(const std::string &name) {
  return isa::load_config(std::string(VACC_SOURCE_DIR) + "/configs/" + name + ".yaml");
}

// Samples [begin, begin + n) of the bundled images, as one [n, 1, 28, 28] tensor.
graph::Tensor samples(int64_t begin, int64_t n) {
  static const NpyArray all = read_npy(kModels + "/fashion_mnist_samples.npy");
  graph::Tensor t(graph::DType::kFloat32, {n, 1, 28, 28});
  std::memcpy(t.raw(), all.data.data() + begin * 28 * 28 * 4, t.nbytes());
  return t;
}

using test::host;

// The compiler's int8 reference: the graph pipeline run independently of the package, then
// the reference executor on its output graph (the same calibration and quantization code as
// compile_model: see the file comment).
graph::Tensor int8_reference(const isa::HwConfig &config, int64_t batch, const graph::Tensor &x) {
  static std::map<std::pair<std::string, int64_t>, std::unique_ptr<graph::Graph>> cache;
  auto &g = cache[{config.name, batch}];
  if (!g) {
    graph::ImportOptions io;
    io.dims["N"] = batch;
    g = std::make_unique<graph::Graph>(graph::import_onnx(kModel, io));
    std::string source;
    auto calib = compile::calibration_batches(*g, "", &source);
    graph::PipelineOptions po;
    po.accel_legality = lower::accel_legality(config);
    graph::run_graph_pipeline(*g, config, calib, po);
  }
  return graph::ReferenceExecutor(*g).run({x})[0];
}

std::vector<runtime::HostTensor> run_package(const isa::Package &p, const isa::HwConfig &c,
                                             const std::string &engine, const graph::Tensor &x,
                                             runtime::RunProfile *profile = nullptr) {
  auto device = driver::open_device(engine, c);
  host::ReferenceKernels cpu(p);
  runtime::GraphExecutor exec(p, cpu, device.get(), c);
  return exec.run({host(x)}, profile);
}

int accel_steps(const isa::Package &p) {
  int n = 0;
  for (const auto &s : p.steps) n += s.commands.has_value();
  return n;
}

void expect_bit_exact(const std::string &config_name, const std::string &engine, int64_t batch,
                      int64_t first, int64_t runs) {
  const isa::HwConfig c = config_named(config_name);
  compile::CompileOptions o;
  o.batch = batch;
  const isa::Package p = compile::compile_model(kModel, c, o).package;
  ASSERT_EQ(accel_steps(p), 5) << "3 convolutions and 2 dense layers on the accelerator";
  for (int64_t r = 0; r < runs; ++r) {
    const graph::Tensor x = samples(first + r * batch, batch);
    const graph::Tensor want = int8_reference(c, batch, x);
    runtime::RunProfile profile;
    const auto got = run_package(p, c, engine, x, &profile);
    ASSERT_EQ(got[0].shape, want.shape());
    ASSERT_EQ(got[0].data.size(), want.nbytes());
    EXPECT_EQ(std::memcmp(got[0].data.data(), want.raw(), want.nbytes()), 0)
        << config_name << " on " << engine << ", images " << first + r * batch << "..+" << batch;
    int on_accel = 0;
    for (const auto &s : profile.steps) on_accel += s.where == isa::StepTarget::kAccel;
    EXPECT_EQ(on_accel, 5);
  }
}

TEST(ModelE2E, BitExactWithCompilerInt8ReferenceOnEveryEngine) {
  for (const std::string &engine : test::test_engines())
    expect_bit_exact("default", engine, 1, 0, 6);
}

// Every layer, not only the logits: each step's output on each engine equals the reference
// executor's value for it.
TEST(ModelE2E, EveryLayerBitExactOnEveryEngine) {
  const isa::HwConfig c = config_named("default");
  const isa::Package p = compile::compile_model(kModel, c).package;
  host::ReferenceCheck check(p);
  for (const std::string &engine : test::test_engines()) {
    for (int64_t i : {7, 11}) {
      const graph::Tensor x = samples(i, 1);
      check.expect({x});
      auto device = driver::open_device(engine, c);
      host::ReferenceKernels cpu(p);
      runtime::GraphExecutor exec(p, cpu, device.get(), c);
      exec.run({host(x)}, nullptr, check.observer());
      EXPECT_EQ(check.compared(), int64_t(p.steps.size()));
      for (const auto &m : check.mismatches()) ADD_FAILURE() << engine << ": " << m.describe();
    }
  }
}

TEST(ModelE2E, BitExactBatchOfFourOnFsim) {
  expect_bit_exact("default", "fsim", 4, 8, 2);
}

TEST(ModelE2E, BitExactOnSmallAndWideConfigs) {
  expect_bit_exact("small", "fsim", 1, 20, 2);
  expect_bit_exact("wide", "fsim", 1, 30, 2);
}

TEST(ModelE2E, RtlCountsCyclesPerLayer) {
  const isa::HwConfig c = config_named("default");
  const isa::Package p = compile::compile_model(kModel, c).package;
  runtime::RunProfile profile;
  run_package(p, c, "rtl", samples(0, 1), &profile);
  for (const auto &s : profile.steps) {
    if (s.where != isa::StepTarget::kAccel) continue;
    ASSERT_TRUE(s.cycles.has_value()) << s.name;
    EXPECT_GT(*s.cycles, 0u) << s.name;
    // The GEMM core cannot do more than its peak per cycle, padding included.
    EXPECT_LE(s.executed_macs, int64_t(*s.cycles) * c.peak_macs_per_cycle()) << s.name;
    EXPECT_LE(s.macs, s.executed_macs) << s.name;
  }
  run_package(p, c, "fsim", samples(0, 1), &profile);
  for (const auto &s : profile.steps) EXPECT_FALSE(s.cycles.has_value()) << "fsim has no cycles";
}

// Utilization counts the model's own MACs: each accelerator step's count equals the one of
// its ONNX operator (plain shapes, before the channels are padded to the GEMM blocks), while
// the executed count includes the padding (conv1's single input channel fills a block).
TEST(ModelE2E, StepsCarryTheModelsOwnMacs) {
  const isa::HwConfig c = config_named("default");
  const isa::Package p = compile::compile_model(kModel, c).package;
  graph::ImportOptions io;
  io.dims["N"] = 1;
  const graph::Graph onnx = graph::import_onnx(kModel, io);
  std::vector<int64_t> want;  // the ONNX GEMM operators' MACs, in graph order
  for (const graph::Node *n : onnx.nodes()) {
    const graph::Value *out = n->outputs.at(0);
    const graph::Value *w = n->input(1);
    if (n->op == graph::OpKind::kConv)  // [OC, C/groups, KH, KW]
      want.push_back(graph::num_elements(out->shape) * w->shape[1] * w->shape[2] * w->shape[3]);
    else if (n->op == graph::OpKind::kGemm)  // [N, K] x [K, M]
      want.push_back(graph::num_elements(out->shape) * n->input(0)->shape.at(1));
  }
  ASSERT_EQ(want.size(), 5u);
  ASSERT_EQ(want[0], 1 * 28 * 28 * 16 * 1 * 3 * 3)
      << "the model's first convolution: 1 -> 16 channels, 3x3, 28x28";
  std::vector<const isa::PackageStep *> accel;
  for (const auto &s : p.steps)
    if (s.commands) accel.push_back(&s);
  ASSERT_EQ(accel.size(), want.size());
  for (size_t i = 0; i < accel.size(); ++i) {
    EXPECT_EQ(accel[i]->model_macs, want[i]) << accel[i]->name;
    EXPECT_GE(accel[i]->macs, accel[i]->model_macs) << accel[i]->name;
  }
  EXPECT_EQ(accel[0]->macs, accel[0]->model_macs / 9 * c.block_in)
      << "1 input channel, its 3x3 windows folded into 9 channels, padded to a block of "
      << c.block_in;

  // The run profile carries both counts through.
  runtime::RunProfile profile;
  run_package(p, c, "fsim", samples(0, 1), &profile);
  ASSERT_EQ(profile.steps.size(), p.steps.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    EXPECT_EQ(profile.steps[i].macs, p.steps[i].model_macs) << p.steps[i].name;
    EXPECT_EQ(profile.steps[i].executed_macs, p.steps[i].macs) << p.steps[i].name;
  }
}

TEST(ModelE2E, FloatPackageMatchesPyTorchLogits) {
  const isa::HwConfig c = config_named("default");
  compile::CompileOptions o;
  o.batch = 16;
  o.quantize = false;
  const isa::Package p = compile::compile_model(kModel, c, o).package;
  EXPECT_EQ(accel_steps(p), 0);
  host::ReferenceKernels cpu(p);
  runtime::GraphExecutor exec(p, cpu, nullptr, c);
  const auto got = exec.run({host(samples(0, 16))})[0];
  const NpyArray want = read_npy(kModels + "/fashion_mnist_logits.npy");
  const float *g = reinterpret_cast<const float *>(got.data.data());
  double max_ref = 0, max_err = 0;
  for (int64_t i = 0; i < 16 * 10; ++i) {
    max_ref = std::max(max_ref, std::abs(double(want.as<float>()[i])));
    max_err = std::max(max_err, std::abs(double(g[i]) - want.as<float>()[i]));
  }
  EXPECT_LE(max_err, 1e-4 * max_ref);
}

TEST(ModelE2E, Int8OnFsimClassifiesTheBundledSamples) {
  const isa::HwConfig c = config_named("default");
  compile::CompileOptions o;
  o.batch = 64;
  const isa::Package p = compile::compile_model(kModel, c, o).package;
  const NpyArray labels = read_npy(kModels + "/fashion_mnist_labels.npy");
  int correct = 0;
  for (int64_t b = 0; b < 4; ++b) {
    const auto out = run_package(p, c, "fsim", samples(b * 64, 64))[0];
    const float *v = reinterpret_cast<const float *>(out.data.data());
    for (int64_t i = 0; i < 64; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < 10; ++j)
        if (v[i * 10 + j] > v[i * 10 + best]) best = j;
      correct += best == labels.as<int64_t>()[b * 64 + i];
    }
  }
  EXPECT_GE(correct, int(0.88 * 256)) << correct << " of 256";
}

TEST(ModelE2E, PackageRoundTripsThroughAFile) {
  const isa::HwConfig c = config_named("default");
  const isa::Package p = compile::compile_model(kModel, c).package;
  const std::string path = testing::TempDir() + "/model_e2e_roundtrip.vpkg";
  isa::save_package(p, path);
  ASSERT_TRUE(isa::is_package_file(path));
  const isa::Package q = isa::load_package(path);
  EXPECT_EQ(q.steps.size(), p.steps.size());
  EXPECT_EQ(q.tensors.size(), p.tensors.size());
  EXPECT_EQ(q.blobs, p.blobs);
  EXPECT_EQ(q.arena_bytes, p.arena_bytes);
  for (size_t i = 0; i < p.steps.size(); ++i) {
    EXPECT_EQ(q.steps[i].op, p.steps[i].op);
    EXPECT_EQ(q.steps[i].attrs, p.steps[i].attrs);
    EXPECT_EQ(q.steps[i].bindings, p.steps[i].bindings);
  }
  const graph::Tensor x = samples(3, 1);
  const auto a = run_package(p, c, "fsim", x), b = run_package(q, c, "fsim", x);
  EXPECT_EQ(a[0].data, b[0].data);
  // The graph a package holds prints like the graph it was made from.
  EXPECT_EQ(graph::print_graph(compile::graph_from_package(p)),
            graph::print_graph(compile::graph_from_package(q)));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace vacc
