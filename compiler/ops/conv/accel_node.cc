// vacc.QConv as the accelerator's convolution layer (Conv2dParams): its window, groups,
// requantization and fused residual and pool, from the node and its values' layouts.
#include <algorithm>
#include <cstdlib>

#include "lower/ops/node_mapping.h"
#include "vacc/graph/conv_chain.h"
#include "vacc/lower/host_layout.h"
#include "vacc/support/block_groups.h"

namespace vacc::lower {
namespace {

// Symmetric padding (top == bottom, left == right) of a convolution, from its pads attribute
// or, with auto_pad, from its shapes; nullopt when it is asymmetric.
std::optional<std::pair<int64_t, int64_t>> symmetric_pads(const graph::Node &node,
                                                          const Conv2dParams &p, int64_t oh,
                                                          int64_t ow) {
  const std::string auto_pad = node.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = node.attrs.get_ints("pads", {0, 0, 0, 0});
    if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3]) return std::nullopt;
    return std::make_pair(pads[0], pads[1]);
  }
  const int64_t th = std::max<int64_t>(0, (oh - 1) * p.stride_h + p.kernel_h - p.height);
  const int64_t tw = std::max<int64_t>(0, (ow - 1) * p.stride_w + p.kernel_w - p.width);
  if (th % 2 || tw % 2) return std::nullopt;
  return std::make_pair(th / 2, tw / 2);
}

// A residual add fused into a convolution (graph/passes/fuse_residual_adds.h).
Residual residual_of(const graph::Node &node) {
  Residual r;
  r.lshift_out = static_cast<int>(node.attrs.get_int("residual_lshift", 0));
  r.lshift_skip = static_cast<int>(node.attrs.get_int("residual_lshift_skip", 0));
  r.rshift = static_cast<int>(node.attrs.get_int("residual_rshift", 0));
  r.clip_min = node.attrs.get_int("residual_clip_min", -128);
  r.clip_max = node.attrs.get_int("residual_clip_max", 127);
  return r;
}

std::optional<Layer> conv2d_layer_of(const graph::Node &node, const isa::HwConfig &c,
                                     std::string *why) {
  const graph::Value *x = node.inputs[0], *y = node.outputs[0];
  // Each value in its own layout: a folded convolution's input is blocked (its windowed
  // pack) before pack_layout blocks its weight and output.
  const graph::Value *w = node.inputs[1];
  auto rank_of = [](const graph::Value *v) { return v->layout.blocked ? 6 : 4; };
  if (x->rank() != rank_of(x) || w->rank() != rank_of(w) || y->rank() != rank_of(y))
    return reject(why, "only 2-D convolutions map to the GEMM core");
  Conv2dParams p;
  const Dims in = dims_of(*x, c.batch, c.block_in);
  p.batch = in.n;
  p.in_channels = in.c;
  p.height = x->shape[2];
  p.width = x->shape[3];
  const bool packed = w->layout.blocked;  // by pack_layout, with the output
  p.out_channels = packed ? w->shape[0] * w->shape[4] : round_up(w->shape[0], c.block_out);
  // Grouped: packed, the group attribute holds the slices pack_layout chose; plain, the
  // same choice from the model's channels.
  const int64_t group = node.attrs.get_int("group", 1);
  p.groups =
      packed ? group : block_groups(x->shape[1], w->shape[0], group, c.block_in, c.block_out);
  p.kernel_h = w->shape[2];
  p.kernel_w = w->shape[3];
  const std::vector<int64_t> strides = node.attrs.get_ints("strides", {1, 1});
  if (strides.size() != 2) return reject(why, "only 2-D convolutions map to the GEMM core");
  p.stride_h = strides[0];
  p.stride_w = strides[1];
  const auto pads = symmetric_pads(node, p, y->shape[2], y->shape[3]);
  if (!pads) return reject(why, "asymmetric padding");
  p.pad_h = pads->first;
  p.pad_w = pads->second;
  p.requant = requant_of(node, c, packed, p.out_channels);
  if (const graph::Value *skip = node.input(3)) {
    if (skip->rank() != rank_of(y) || skip->shape[2] != y->shape[2] ||
        skip->shape[3] != y->shape[3])
      return reject(why, "the fused residual's skip tensor does not match the output");
    p.residual = residual_of(node);
  }
  if (node.attrs.has("pool_kernel_shape")) {  // graph/passes/fuse_pools.h
    const std::vector<int64_t> k = node.attrs.get_ints("pool_kernel_shape");
    const std::vector<int64_t> st = node.attrs.get_ints("pool_strides", {1, 1});
    if (k.size() != 2 || st.size() != 2) return reject(why, "a fused pool's window is not 2-D");
    p.pool = PoolEpilogue{k[0], k[1], st[0], st[1]};
    if (p.result_height() != y->shape[2] || p.result_width() != y->shape[3])
      return reject(why, "the fused pool's output does not match the node's");
  }
  return Layer{node.name, p};
}

std::optional<std::string> conv2d_refuses(const graph::Node &node) {
  if (!node.inputs[1]->is_constant()) return std::string("weights are not constant");
  for (int64_t d : node.attrs.get_ints("dilations", {1, 1}))
    if (d != 1) return std::string("dilated convolution");
  if (node.attrs.has("pool_kernel_shape")) {
    // The fused pool takes the max of the accumulators before the bias is added and the
    // requantization, which commutes with the max while acc + bias cannot wrap at 32 bits.
    const graph::Value *w = node.inputs[1], *b = node.input(2);
    const int64_t outs = w->layout.blocked ? w->shape[0] * w->shape[4] : w->shape[0];
    const int64_t terms = outs ? w->constant->size() / outs : 0;
    int64_t bias = 0;
    if (b && b->constant)
      for (int64_t i = 0; i < b->constant->size(); ++i)
        bias = std::max<int64_t>(bias, std::abs(b->constant->as_int(i)));
    if (int64_t{128} * 128 * terms + bias >= (int64_t{1} << 31))
      return std::string("a fused max pool over accumulators that may wrap at 32 bits");
  }
  return std::nullopt;
}

// vacc.QConvChain (graph/conv_chain.h): its two parts' layers as one chain.
std::optional<Layer> conv_chain_layer_of(const graph::Node &node, const isa::HwConfig &c,
                                         std::string *why) {
  const std::unique_ptr<graph::ConvChainParts> parts = graph::conv_chain_parts(node);
  std::string part_why;
  const std::optional<Layer> first = conv2d_layer_of(parts->first, c, &part_why);
  if (!first) return reject(why, "its first convolution: " + part_why);
  const std::optional<Layer> second = conv2d_layer_of(parts->second, c, &part_why);
  if (!second) return reject(why, "its second convolution: " + part_why);
  return Layer{node.name, ConvChainParams{std::get<Conv2dParams>(first->params),
                                          std::get<Conv2dParams>(second->params)}};
}

std::optional<std::string> conv_chain_refuses(const graph::Node &node) {
  const std::unique_ptr<graph::ConvChainParts> parts = graph::conv_chain_parts(node);
  if (auto why = conv2d_refuses(parts->first)) return "its first convolution: " + *why;
  if (auto why = conv2d_refuses(parts->second)) return "its second convolution: " + *why;
  return std::nullopt;
}

}  // namespace

NodeMapping conv2d_node_mapping() {
  return {{graph::OpKind::kQConv}, conv2d_layer_of, conv2d_refuses};
}

NodeMapping conv_chain_node_mapping() {
  return {{graph::OpKind::kQConvChain}, conv_chain_layer_of, conv_chain_refuses};
}

}  // namespace vacc::lower
