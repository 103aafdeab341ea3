// ONNX's own node tests through vacc's importer and the graph reference executor.
#include "onnx_conformance.h"

#include "vacc/graph/executor.h"

namespace vacc::graph::conformance {
namespace {

std::vector<Tensor> run_reference(const Graph &graph, const std::vector<Tensor> &inputs) {
  return Executor(graph).run(inputs);
}

// Floors: the counts passing today (raise them when more pass).
TEST(OnnxConformance, NodeTests) {
  check_suite("node", 439, run_reference);
}
TEST(OnnxConformance, PytorchConverted) {
  check_suite("pytorch-converted", 68, run_reference);
}
TEST(OnnxConformance, PytorchOperator) {
  check_suite("pytorch-operator", 30, run_reference);
}
TEST(OnnxConformance, Simple) {
  check_suite("simple", 5, run_reference);
}

}  // namespace
}  // namespace vacc::graph::conformance
