// Whether a graph node runs on the accelerator: one decision, made once, by the partitioner
// (graph/passes/partition.h calls it through its legality callback, since graph/ does not link
// the backend). A node is legal when it lowers to the config's intrinsics (an int8 GEMM with
// int32 accumulation and the ALU's requantization, vacc.QConv: 2-D, no dilation, symmetric
// padding, grouped and depthwise ones as slices of whole channel blocks (block_groups.h);
// vacc.QDense; vacc.QAdd of NCHW tensors), its operator supports its
// parameters (check_supported) and a tiling fits the scratchpads (default_schedule). Lowering
// then reads the same layer from the packed node (layer_of), so it never falls back.
#pragma once

#include <optional>
#include <string>

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/partition.h"
#include "vacc/isa/config.h"
#include "vacc/lower/operators.h"

namespace vacc::lower {

// The layer the accelerator runs for `node`, in the blocked layout of operators.h: from its
// blocked shapes once pack_layout has run, or from its plain NCHW shapes before (channels
// rounded up to the config's blocks, per-channel shifts padded with 0, as pack_layout does).
// nullopt, with the reason in `why`, when the node is not one of the accelerator's operators
// or its shapes or attributes do not map to one.
std::optional<Layer> layer_of(const graph::Node &node, const isa::HwConfig &config,
                              std::string *why);

// The operators layer_of maps to an accelerator layer (when their shapes and attributes fit):
// the accelerator's operator set, written once.
bool has_accelerator_layer(graph::OpKind op);

// nullopt when `node` runs on the accelerator lowered with `vthreads` virtual threads; else
// the reason it does not.
std::optional<std::string> why_not_accelerated(const graph::Node &node, const isa::HwConfig &config,
                                               int vthreads = 2);

// why_not_accelerated for `config`, as the partitioner's callback (graph::PipelineOptions).
// The config is copied into it.
graph::AccelLegality accel_legality(const isa::HwConfig &config, int vthreads = 2);

}  // namespace vacc::lower
