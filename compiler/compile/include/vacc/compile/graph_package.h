// The compiled graph <-> the runtime's package (isa/package.h). Every value becomes a
// package tensor (constants carry their bytes, activations their slot of the memory plan)
// and every node a step, in the graph's (topological) node order; graph_from_package() turns
// a package back into an equivalent graph, so that the compiler's reference executor can run
// a package (the CPU fallback and the int8 reference of the bit-exactness tests).
#pragma once

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/plan_memory.h"
#include "vacc/isa/config.h"
#include "vacc/isa/package.h"

namespace vacc::compile {

// The steps and tensors of `graph`, with `plan` giving each activation its arena offset.
// Accelerator steps get no command list here (compiler/lower: lower_model.h). MACs are counted for
// the GEMM operators (convolutions, dense layers) from their shapes: executed (channels padded to
// the GEMM blocks) and the model's own (graph/macs.h).
isa::Package package_graph(const graph::Graph &graph, const graph::MemoryPlan &plan,
                           const isa::HwConfig &config);

// The graph a package holds: node i is step i, value j is tensor j. Throws vacc::Error
// naming the step when an operator or attribute is unknown to this vacc.
graph::Graph graph_from_package(const isa::Package &package);

// The graph IR's dtype of a package dtype name ("f32", "i8", ...).
graph::DType dtype_from_name(const std::string &name);

}  // namespace vacc::compile
