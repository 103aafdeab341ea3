// The graph reference executor: runs every operator of the graph IR on the host, float32 and
// the integer types quantization needs, with Eigen for the heavy numerics (DESIGN.md). Its
// integer semantics (vacc.QConv, vacc.QDense, vacc.QAdd, vacc.Requantize) are the bit-exact
// reference that the accelerator reproduces (docs/quantization.md).
#pragma once

#include <functional>
#include <vector>

#include "vacc/graph/graph.h"

namespace vacc::graph {

class ReferenceExecutor {
 public:
  // Called with every value a run computes (graph inputs included), e.g. for calibration.
  using Observer = std::function<void(const Value &, const Tensor &)>;

  // Runs node `index` of graph.nodes() on its operands (nullptr for absent optional
  // inputs); returns one tensor per output. Other backends (the LLVM CPU executor) plug in
  // here and reuse the walk: operand lookup, freeing intermediates, output checks.
  using NodeRunner = std::function<std::vector<Tensor>(size_t index, const Node &node,
                                                       const std::vector<const Tensor *> &in)>;

  explicit ReferenceExecutor(const Graph &graph);  // runs each node with execute_node()
  ReferenceExecutor(const Graph &graph, NodeRunner runner)
      : graph_(graph), runner_(std::move(runner)) {}

  // Runs the graph on one tensor per graph input, in order; returns the graph outputs.
  // A wrong number, dtype or shape of inputs is a vacc::Error naming the input; an error in
  // a node names the node.
  std::vector<Tensor> run(const std::vector<Tensor> &inputs, const Observer &observer = {}) const;

 private:
  const Graph &graph_;
  NodeRunner runner_;
};

// Runs one node on the given input tensors (nullptr for absent optional inputs); returns one
// tensor per node output (absent outputs get an empty tensor). Used by constant folding.
std::vector<Tensor> execute_node(const Node &node, const std::vector<const Tensor *> &inputs);

}  // namespace vacc::graph
