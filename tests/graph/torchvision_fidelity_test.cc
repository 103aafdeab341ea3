// Fidelity on large models: torchvision's ResNet-18 and MobileNetV2 (seeded random weights,
// exported by tools/export_torchvision.py; not committed). The float reference executor must
// match PyTorch to 1e-4 relative; the int8 graph after the full graph pipeline must have
// cosine similarity >= 0.99 with the float output. Opt-in: skipped, saying so, when the
// exports are absent.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "vacc/graph/executor.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/pipeline.h"
#include "vacc/lower/legality.h"
#include "vacc/support/npy.h"

using namespace vacc::graph;

namespace {

std::string cache_dir() {
  const char *env = std::getenv("VACC_MODEL_CACHE");
  return env ? env : VACC_MODEL_CACHE;
}

Tensor npy_f32(const std::string &path) {
  vacc::NpyArray a = vacc::read_npy(path);
  EXPECT_EQ(a.dtype, "f4") << path;
  Tensor t(DType::kFloat32, a.shape);
  std::memcpy(t.raw(), a.data.data(), t.nbytes());
  return t;
}

void check_model(const std::string &name) {
  std::string base = cache_dir() + "/" + name;
  if (!std::filesystem::exists(base + ".onnx")) {
    GTEST_SKIP() << base << ".onnx is absent: run tools/export_torchvision.py --out " << cache_dir()
                 << " (or set VACC_MODEL_CACHE) to enable this test";
  }
  Tensor input = npy_f32(base + "_input.npy");
  Tensor want = npy_f32(base + "_output.npy");
  Graph float_graph = import_onnx(base + ".onnx");
  Tensor got = Executor(float_graph).run({input})[0];
  ASSERT_EQ(got.shape(), want.shape());
  double max_ref = 0, max_err = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    max_ref = std::max(max_ref, std::abs(want.as_double(i)));
    max_err = std::max(max_err, std::abs(got.as_double(i) - want.as_double(i)));
  }
  std::cout << name << ": float max abs error " << max_err << " (max |output| " << max_ref << ")\n";
  EXPECT_LE(max_err, 1e-4 * max_ref);

  Tensor calib = npy_f32(base + "_calib.npy");
  std::vector<std::vector<Tensor>> batches;
  int64_t per = calib.size() / calib.dim(0);
  for (int64_t i = 0; i < calib.dim(0); ++i) {
    Tensor t(DType::kFloat32, input.shape());
    std::memcpy(t.raw(), calib.raw() + i * per * 4, per * 4);
    batches.push_back({t});
  }
  Graph int8_graph = import_onnx(base + ".onnx");
  PipelineOptions po;
  po.accel_legality = vacc::lower::accel_legality(vacc::isa::HwConfig{});
  PipelineResult result = run_graph_pipeline(int8_graph, vacc::isa::HwConfig{}, batches, po);
  Tensor q = Executor(int8_graph).run({input})[0];
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < q.size(); ++i) {
    ab += q.as_double(i) * got.as_double(i);
    aa += q.as_double(i) * q.as_double(i);
    bb += got.as_double(i) * got.as_double(i);
  }
  double cosine = ab / std::sqrt(aa * bb);
  int accel = 0;
  for (const Node *n : int8_graph.nodes()) accel += n->target == Target::kAccel;
  std::cout << name << ": int8 cosine " << cosine << ", " << accel << " of "
            << int8_graph.num_nodes() << " nodes on the accelerator, activation arena "
            << result.memory.arena_bytes << " bytes\n";
  EXPECT_GE(cosine, 0.99);
}

TEST(TorchvisionFidelity, ResNet18) {
  check_model("resnet18");
}
TEST(TorchvisionFidelity, MobileNetV2) {
  check_model("mobilenet_v2");
}

}  // namespace
