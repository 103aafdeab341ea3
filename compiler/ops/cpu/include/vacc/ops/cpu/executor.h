// The graph executor on the CPU backend: runs any imported graph node by node through
// JIT-compiled kernels (ops.h, codegen/cpu). Kernels are built when the executor is created,
// one per node, and compiled once per distinct kernel (the JIT's structural cache), so two
// nodes with the same signature share machine code. Shape-only operators are host copies.
// Same contract as graph::ReferenceExecutor: inputs in graph order, outputs in graph order.
#pragma once

#include <memory>
#include <vector>

#include "vacc/graph/graph.h"

namespace vacc::ops::cpu {

// One node's CPU implementation: its JIT-compiled kernel (or the host copy for shape-only
// operators), built from the node's attributes, types and shapes.
class NodeKernel {
 public:
  // An unsupported node is a vacc::Error naming it (`index` is its position, for messages).
  NodeKernel(const graph::Node &node, int index);
  ~NodeKernel();
  NodeKernel(const NodeKernel &) = delete;
  NodeKernel &operator=(const NodeKernel &) = delete;

  // Runs the node on one tensor per node input (nullptr where an optional input is absent);
  // returns one tensor per node output (empty where an output is absent). Errors are not
  // prefixed with the node: the graph walk that calls it names the node.
  std::vector<graph::Tensor> run(const std::vector<const graph::Tensor *> &inputs) const;

  // Runs a compiled kernel in place: inputs[i] the bytes of node input i, outputs[o] room for
  // node output o (nullptr where absent), dense row-major, not overlapping, but for a Concat
  // whose inputs already lie in their slices of the output (an in-place concatenation of the
  // memory plan), which has nothing to do. False, having done nothing, for host operators (use
  // run()).
  bool run(const std::vector<const uint8_t *> &inputs, const std::vector<uint8_t *> &outputs) const;

 private:
  struct Compiled;
  const graph::Node &node_;
  std::unique_ptr<Compiled> compiled_;  // null for host operators
};

class CpuExecutor {
 public:
  // Builds and compiles every node's kernel; an unsupported node is a vacc::Error naming it.
  explicit CpuExecutor(const graph::Graph &graph);
  ~CpuExecutor();

  std::vector<graph::Tensor> run(const std::vector<graph::Tensor> &inputs) const;

 private:
  const graph::Graph &graph_;
  std::vector<std::unique_ptr<NodeKernel>> steps_;
};

}  // namespace vacc::ops::cpu
