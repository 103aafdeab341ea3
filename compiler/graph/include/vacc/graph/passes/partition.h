// Partitioning between the accelerator and the CPU. An operator goes to the accelerator when
// it lowers to the config's intrinsics: an int8 GEMM with int32 accumulation followed by the
// ALU's requantization (vacc.QConv: 2-D, group 1, no dilation; vacc.QDense) or an
// element-wise add (vacc.QAdd), with operand widths and shift amounts the config supports.
// Everything else runs on the CPU.
#pragma once

#include <string>

#include "vacc/graph/graph.h"
#include "vacc/isa/config.h"

namespace vacc::graph {

// True when `node` can run on the accelerator described by `config`; otherwise, when `why`
// is given, sets it to the reason (for --dump-ir and per-layer tables).
bool accelerator_supports(const Node &node, const isa::HwConfig &config,
                          std::string *why = nullptr);

// Sets every node's target; returns the number of nodes placed on the accelerator.
int partition(Graph &graph, const isa::HwConfig &config);

}  // namespace vacc::graph
