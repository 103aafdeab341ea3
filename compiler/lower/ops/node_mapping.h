// The accelerator part of each operator that maps graph nodes to layers: which graph operators
// (vacc.QConv, vacc.QDense, ...) become which layer (lower/operators.h), what keeps a node of
// the operator off the accelerator, and the helpers their mappings share. legality.cc asks
// this table; each operator's mapping lives beside its lowering
// (compiler/ops/<family>/accel_node.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/isa/config.h"
#include "vacc/lower/operators.h"

namespace vacc::lower {

struct NodeMapping {
  std::vector<graph::OpKind> ops;
  // The node's layer, or nullopt with the reason in *why (when given).
  std::optional<Layer> (*layer_of)(const graph::Node &node, const isa::HwConfig &config,
                                   std::string *why);
  // What else keeps a node of the operator off the accelerator, checked before its layer is
  // built; nullopt: nothing.
  std::optional<std::string> (*refuses)(const graph::Node &node) = nullptr;
};

// The mapping of `op`, or null when the accelerator has no layer for it.
const NodeMapping *node_mapping(graph::OpKind op);

// Each operator's entry (compiler/ops/<family>/accel_node.cc).
NodeMapping conv2d_node_mapping();
NodeMapping conv_chain_node_mapping();
NodeMapping dense_node_mapping();
NodeMapping add_node_mapping();
NodeMapping pool2d_node_mapping();

// --- Shared by the mappings (node_mapping.cc).
// nullopt, with the reason in *why when given.
std::optional<Layer> reject(std::string *why, std::string reason);


// The requantization of a fused operator: one shift or one per output channel (padded with 0
// to the channel blocks, as pack_layout pads them), multipliers (one per `out_channels`, the
// padded count), and its clip bounds.
Requant requant_of(const graph::Node &node, const isa::HwConfig &config, bool blocked,
                   int64_t out_channels);

// Batch and channels of an activation: [N/B, C/BC, H, W, B, BC] blocked, [N, C, H, W] (or
// [N, C] for dense) plain, rounded up to the blocks.
struct Dims {
  int64_t n, c;
};
Dims dims_of(const graph::Value &v, int64_t block_n, int64_t block_c);

}  // namespace vacc::lower
