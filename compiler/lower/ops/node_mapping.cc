#include "node_mapping.h"

#include <algorithm>

#include "vacc/lower/host_layout.h"

namespace vacc::lower {

const NodeMapping *node_mapping(graph::OpKind op) {
  static const std::vector<NodeMapping> mappings = {conv2d_node_mapping(),
                                                    conv_chain_node_mapping(), dense_node_mapping(),
                                                    add_node_mapping(), pool2d_node_mapping()};
  for (const NodeMapping &m : mappings)
    if (std::find(m.ops.begin(), m.ops.end(), op) != m.ops.end()) return &m;
  return nullptr;
}

std::optional<Layer> reject(std::string *why, std::string reason) {
  if (why) *why = std::move(reason);
  return std::nullopt;
}

Requant requant_of(const graph::Node &node, const isa::HwConfig &config, bool blocked,
                   int64_t out_channels) {
  std::vector<int64_t> shifts = node.attrs.get_ints("shifts", {0});
  if (!blocked && shifts.size() > 1) shifts.resize(round_up(shifts.size(), config.block_out), 0);
  Requant r;
  r.shift = static_cast<int>(shifts[0]);
  if (std::any_of(shifts.begin(), shifts.end(), [&](int64_t s) { return s != shifts[0]; }))
    r.channel_shifts = shifts;
  std::vector<int64_t> mults = node.attrs.get_ints("multipliers");
  if (!mults.empty()) {
    if (!blocked && mults.size() > 1) mults.resize(round_up(mults.size(), config.block_out), 0);
    // One multiplier for every channel is a vector operand all the same.
    if (mults.size() == 1) mults.resize(out_channels, mults[0]);
    r.multipliers = mults;
    r.pre_clip = node.attrs.get_int("pre_clip", 0);
    r.post_shift = static_cast<int>(node.attrs.get_int("post_shift", 0));
    r.zero_point = node.attrs.get_int("zero_point", 0);
  }
  const int64_t lo = node.attrs.get_int("clip_min", -128), hi = node.attrs.get_int("clip_max", 127);
  r.relu = lo == 0;
  r.clip_min = lo;
  r.clip_max = hi;
  return r;
}


Dims dims_of(const graph::Value &v, int64_t block_n, int64_t block_c) {
  if (v.layout.blocked) {
    const size_t r = v.shape.size();
    return {v.shape[0] * v.shape[r - 2], v.shape[1] * v.shape[r - 1]};
  }
  return {round_up(v.shape[0], block_n), round_up(v.shape[1], block_c)};
}

}  // namespace vacc::lower
