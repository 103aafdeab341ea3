// ONNX's own node tests through vacc's importer and the CPU backend's graph executor
// (JIT-compiled kernels, compiler/ops/cpu). The closing line counts every suite together as
// "N passed, N failed".
#include "../graph/onnx_conformance.h"

#include "vacc/ops/cpu/executor.h"

namespace vacc::graph::conformance {
namespace {

std::vector<Tensor> run_cpu_backend(const Graph &graph, const std::vector<Tensor> &inputs) {
  return ops::cpu::CpuExecutor(graph).run(inputs);
}

// Floors: the counts passing today (raise them when more pass); the same as the reference
// executor's (tests/graph/onnx_conformance_test.cc).
TEST(CpuConformance, AllSuites) {
  int passed = 0, failed = 0;
  for (const auto &[suite, floor] : {std::pair{"node", 605}, std::pair{"pytorch-converted", 82},
                                     std::pair{"pytorch-operator", 34}, std::pair{"simple", 7}}) {
    const Counts counts = check_suite(suite, floor, run_cpu_backend);
    passed += counts.passed;
    failed += counts.failed;
  }
  std::cout << passed << " passed, " << failed << " failed\n";
}

}  // namespace
}  // namespace vacc::graph::conformance
