// A bidirectional LSTM with sequence_lens end to end, int8: its gate products on the accelerator,
// the per-row masks and gathers of sequence_lens on the CPU, and the output equal to the
// compiler's own int8 reference on every engine. (The float semantics of sequence_lens against
// the rows run alone: tests/graph/recurrent_sequence_lens_test.cc.)
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "e2e_kit.h"
#include "onnx_model_builder.h"
#include "program_kit.h"
#include "vacc/compile/compile_model.h"
#include "vacc/driver/device.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/npy.h"

namespace vacc {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kT = 6, kB = 2, kI = 16, kH = 32;

// x [T, B, I] -> LSTM (bidirectional, lengths 6 and 3) -> Y_h as [B, 2 * H].
std::string write_model(const fs::path &dir) {
  using namespace graph::test;
  onnx::ModelProto m = model_with_input(14, onnx::TensorProto::FLOAT, {kT, kB, kI});
  add_random_initializer(m, "w", {2, 4 * kH, kI}, 7, 0.3f);
  add_random_initializer(m, "r", {2, 4 * kH, kH}, 8, 0.3f);
  add_random_initializer(m, "b", {2, 8 * kH}, 9, 0.3f);
  auto *lens = m.mutable_graph()->add_initializer();
  lens->set_name("lens");
  lens->set_data_type(onnx::TensorProto::INT32);
  lens->add_dims(kB);
  lens->add_int32_data(6);
  lens->add_int32_data(3);
  auto *n = m.mutable_graph()->add_node();
  n->set_op_type("LSTM");
  n->set_name("lstm");
  for (const char *in : {"x", "w", "r", "b", "lens"}) n->add_input(in);
  n->add_output("");
  n->add_output("y_h");
  add_int(n, "hidden_size", kH);
  add_string(n, "direction", "bidirectional");
  add_ints(add_node(m, "Transpose", "t", {"y_h"}, "t"), "perm", {1, 0, 2});
  m.mutable_graph()->mutable_output()->Clear();
  add_node(m, "Flatten", "out", {"t"}, "out");
  const std::string path = (dir / "lstm_lens.onnx").string();
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

NpyArray random_npy(std::vector<int64_t> shape, uint32_t seed) {
  NpyArray a;
  a.dtype = "f4";
  a.shape = std::move(shape);
  a.data.resize(static_cast<size_t>(a.elements()) * 4);
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (int64_t i = 0; i < a.elements(); ++i) {
    const float v = n(rng);
    std::memcpy(a.data.data() + i * 4, &v, 4);
  }
  return a;
}

TEST(RecurrentLensE2E, BidirectionalLstmWithLengthsMatchesTheInt8ReferenceOnEveryEngine) {
  const fs::path dir = fs::temp_directory_path() / ("vacc-lens-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string model = write_model(dir);
  const std::string calibration = (dir / "calib.npy").string();
  write_npy(calibration, random_npy({4 * kT, kB, kI}, 1));  // 4 sequences, stacked on axis 0
  const isa::HwConfig config = test::config_named("default");
  compile::CompileOptions options;
  options.calibration = calibration;
  options.use_tuning_db = false;
  const isa::Package p = compile::compile_model(model, config, options).package;
  int gemms = 0;
  for (const auto &s : p.steps) gemms += s.op == "vacc.QDense" && s.commands.has_value();
  EXPECT_GE(gemms, 2 * kT) << "every step's gate product on the accelerator";

  const NpyArray xs = random_npy({kT, kB, kI}, 2);
  graph::Tensor x(graph::DType::kFloat32, {kT, kB, kI});
  std::memcpy(x.raw(), xs.data.data(), xs.data.size());
  const graph::Tensor want = test::int8_reference(model, calibration, config, x);
  for (const std::string &engine : test::test_engines()) {
    host::ReferenceKernels kernels(p);
    auto device = driver::open_device(engine, config);
    runtime::GraphExecutor exec(p, kernels, device.get(), config);
    const auto got = exec.run({test::host(x)});
    ASSERT_EQ(got[0].data.size(), want.nbytes()) << engine;
    EXPECT_EQ(std::memcmp(got[0].data.data(), want.raw(), want.nbytes()), 0) << engine;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vacc
