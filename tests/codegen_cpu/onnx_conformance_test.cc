// ONNX's own node tests through vacc's importer and the CPU backend's graph executor
// (JIT-compiled kernels, compiler/ops/cpu). The closing line counts both suites together as
// "N passed, N failed".
#include "../graph/onnx_conformance.h"

#include "vacc/ops/cpu/executor.h"

namespace vacc::graph::conformance {
namespace {

std::vector<Tensor> run_cpu_backend(const Graph &graph, const std::vector<Tensor> &inputs) {
  return ops::cpu::CpuExecutor(graph).run(inputs);
}

TEST(CpuConformance, NodeAndPytorchConverted) {
  const Counts node = check_suite("node", 150, run_cpu_backend);
  const Counts converted = check_suite("pytorch-converted", 40, run_cpu_backend);
  std::cout << node.passed + converted.passed << " passed, " << node.failed + converted.failed
            << " failed\n";
}

}  // namespace
}  // namespace vacc::graph::conformance
