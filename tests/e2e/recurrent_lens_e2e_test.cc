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

void add_float(onnx::GraphProto *g, const std::string &name, std::vector<int64_t> dims,
               std::mt19937 &rng) {
  auto *t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  for (int64_t i = 0; i < n; ++i) t->add_float_data(u(rng));
}

// x [T, B, I] -> LSTM (bidirectional, lengths 6 and 3) -> Y_h flattened [B, 2 * H].
std::string write_model(const fs::path &dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(14);
  auto *g = m.mutable_graph();
  g->set_name("lstm_lens");
  auto *x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {kT, kB, kI})
    x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  std::mt19937 rng(7);
  add_float(g, "w", {2, 4 * kH, kI}, rng);
  add_float(g, "r", {2, 4 * kH, kH}, rng);
  add_float(g, "b", {2, 8 * kH}, rng);
  auto *lens = g->add_initializer();
  lens->set_name("lens");
  lens->set_data_type(onnx::TensorProto::INT32);
  lens->add_dims(kB);
  lens->add_int32_data(6);
  lens->add_int32_data(3);
  auto *n = g->add_node();
  n->set_op_type("LSTM");
  n->set_name("lstm");
  for (const char *in : {"x", "w", "r", "b", "lens"}) n->add_input(in);
  n->add_output("");
  n->add_output("y_h");
  auto *a = n->add_attribute();
  a->set_name("hidden_size");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(kH);
  a = n->add_attribute();
  a->set_name("direction");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("bidirectional");
  auto *f = g->add_node();
  f->set_op_type("Transpose");
  f->add_input("y_h");
  f->add_output("t");
  a = f->add_attribute();
  a->set_name("perm");
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t p : {1, 0, 2}) a->add_ints(p);
  auto *r = g->add_node();
  r->set_op_type("Flatten");
  r->add_input("t");
  r->add_output("out");
  g->add_output()->set_name("out");
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
