#include "vacc/lower/legality.h"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "vacc/lower/host_layout.h"
#include "vacc/support/block_groups.h"
#include "vacc/support/error.h"

namespace vacc::lower {
namespace {

std::string no_intrinsic(graph::OpKind op) {
  return fmt::format("{} has no accelerator intrinsic", graph::op_name(op));
}

std::optional<Layer> reject(std::string *why, std::string reason) {
  if (why) *why = std::move(reason);
  return std::nullopt;
}

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

// The requantization of a fused operator: one shift or one per output channel (padded with 0
// to the channel blocks, as pack_layout pads them), multipliers (one per `out_channels`, the
// padded count), and its clip bounds.
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

// Batch and channels of an activation: [N/B, C/BC, H, W, B, BC] blocked, [N, C, H, W] (or
// [N, C] for dense) plain, rounded up to the blocks.
struct Dims {
  int64_t n, c;
};
Dims dims_of(const graph::Value &v, int64_t block_n, int64_t block_c) {
  if (v.layout.blocked) {
    const size_t r = v.shape.size();
    return {v.shape[0] * v.shape[r - 2], v.shape[1] * v.shape[r - 1]};
  }
  return {round_up(v.shape[0], block_n), round_up(v.shape[1], block_c)};
}

// Whether `v` holds no negative value: the output of an operator that clips at 0 or above (a
// fused ReLU), of a Relu, or of a pool, relabelling or layout transform of such a value.
bool nonnegative(const graph::Value *v, int depth = 0) {
  const graph::Node *p = v ? v->producer : nullptr;
  if (!p || depth > 32) return false;
  switch (p->op) {
    case graph::OpKind::kQConv:
    case graph::OpKind::kQDense:
    case graph::OpKind::kRequantize:
    case graph::OpKind::kQAveragePool:
      return p->attrs.get_int(p->input(3) ? "residual_clip_min" : "clip_min", -128) >= 0;
    case graph::OpKind::kQAdd:
      return p->attrs.get_int("clip_min", -128) >= 0;
    case graph::OpKind::kRelu:
      return true;
    case graph::OpKind::kMaxPool:
    case graph::OpKind::kPackNCHWnc:
    case graph::OpKind::kUnpackNCHWnc:
    case graph::OpKind::kFlatten:
    case graph::OpKind::kReshape:
      return nonnegative(p->inputs[0], depth + 1);
    default:
      return false;
  }
}

// A pool's window attributes and explicit padding (pads, or auto_pad from its shapes); false
// when a window attribute is not 2-D or the pool is dilated.
bool pool_window(const graph::Node &node, PoolParams *p, std::string *why) {
  const std::vector<int64_t> kernel = node.attrs.get_ints("kernel_shape");
  const std::vector<int64_t> strides = node.attrs.get_ints("strides", {1, 1});
  if (kernel.size() != 2 || strides.size() != 2) {
    if (why) *why = "only 2-D pools map to the accelerator";
    return false;
  }
  for (int64_t d : node.attrs.get_ints("dilations", {1, 1}))
    if (d != 1) {
      if (why) *why = "dilated pooling";
      return false;
    }
  p->kernel_h = kernel[0];
  p->kernel_w = kernel[1];
  p->stride_h = strides[0];
  p->stride_w = strides[1];
  const std::string auto_pad = node.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    const std::vector<int64_t> pads = node.attrs.get_ints("pads", {0, 0, 0, 0});
    if (pads.size() != 4) {
      if (why) *why = "only 2-D pools map to the accelerator";
      return false;
    }
    p->pad_top = pads[0];
    p->pad_left = pads[1];
    p->pad_bottom = pads[2];
    p->pad_right = pads[3];
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const int64_t th =
        std::max<int64_t>(0, (p->out_height - 1) * p->stride_h + p->kernel_h - p->height);
    const int64_t tw =
        std::max<int64_t>(0, (p->out_width - 1) * p->stride_w + p->kernel_w - p->width);
    const bool upper = auto_pad == "SAME_UPPER";
    p->pad_top = upper ? th / 2 : th - th / 2;
    p->pad_left = upper ? tw / 2 : tw - tw / 2;
    p->pad_bottom = th - p->pad_top;
    p->pad_right = tw - p->pad_left;
  }
  return true;
}

}  // namespace

std::optional<Layer> layer_of(const graph::Node &node, const isa::HwConfig &c, std::string *why) {
  const bool blocked = node.inputs[0] && node.inputs[0]->layout.blocked;
  const graph::Value *x = node.inputs[0], *y = node.outputs[0];
  const int spatial_rank = blocked ? 6 : 4;
  switch (node.op) {
    case graph::OpKind::kQConv: {
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
    case graph::OpKind::kQDense:
    case graph::OpKind::kQMatMul: {
      const graph::Value *w = node.inputs[1];
      const int rank = blocked ? 4 : 2;
      if (x->rank() != rank || w->rank() != rank || y->rank() != rank)
        return reject(why, "only [N, K] x [M, K] dense layers map to the GEMM core");
      DenseParams p;
      p.groups = node.attrs.get_int("groups", 1);
      const Dims in = dims_of(*x, c.batch, c.block_in);
      const int64_t w_rows = blocked ? w->shape[0] * w->shape[2] : w->shape[0];
      if (p.groups > 1) {
        // The groups' rows lie side by side in the blocked layout only when each group is a
        // whole number of blocks.
        const int64_t n = blocked ? in.n : x->shape[0];
        if (n % (p.groups * c.batch) != 0 || w_rows % (p.groups * c.block_out) != 0)
          return reject(why, fmt::format("each of the {} groups needs rows that are a multiple of "
                                         "gemm.batch and columns a multiple of gemm.block_out",
                                         p.groups));
      }
      p.batch = in.n / p.groups;
      p.in_features = in.c;
      p.out_features = p.groups > 1 ? w_rows / p.groups
                       : blocked    ? w_rows
                                    : round_up(w_rows, c.block_out);
      p.requant = requant_of(node, c, blocked, p.out_features);
      return Layer{node.name, p};
    }
    case graph::OpKind::kQAdd: {
      if (x->rank() != spatial_rank || y->rank() != spatial_rank)
        return reject(why, "only NCHW tensors map to the accelerator's add");
      AddParams p;
      const Dims in = dims_of(*x, c.batch, c.block_out);
      p.batch = in.n;
      p.channels = in.c;
      p.height = x->shape[2];
      p.width = x->shape[3];
      p.lshift_a = static_cast<int>(node.attrs.get_int("lshift_a", 0));
      p.lshift_b = static_cast<int>(node.attrs.get_int("lshift_b", 0));
      p.rshift = static_cast<int>(node.attrs.get_int("rshift", 0));
      p.clip_min = node.attrs.get_int("clip_min", -128);
      p.clip_max = node.attrs.get_int("clip_max", 127);
      return Layer{node.name, p};
    }
    case graph::OpKind::kMaxPool:
    case graph::OpKind::kQAveragePool: {
      if (x->rank() != spatial_rank || y->rank() != spatial_rank)
        return reject(why, "only 2-D pools map to the accelerator");
      if (x->dtype != graph::DType::kInt8) return reject(why, "a pool of a float input");
      if (node.outputs.size() > 1 && node.outputs[1])
        return reject(why, "MaxPool's Indices output");
      PoolParams p;
      p.kind =
          node.op == graph::OpKind::kMaxPool ? PoolParams::Kind::kMax : PoolParams::Kind::kAverage;
      const Dims in = dims_of(*x, c.batch, c.block_out);
      p.batch = in.n;
      p.channels = in.c;
      p.height = x->shape[2];
      p.width = x->shape[3];
      p.out_height = y->shape[2];
      p.out_width = y->shape[3];
      if (!pool_window(node, &p, why)) return std::nullopt;
      p.input_nonnegative = nonnegative(x);
      p.count_include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
      p.scale_bits = static_cast<int>(node.attrs.get_int("scale_bits", 0));
      p.rshift = static_cast<int>(node.attrs.get_int("rshift", 1));
      p.clip_min = node.attrs.get_int("clip_min", -128);
      p.clip_max = node.attrs.get_int("clip_max", 127);
      return Layer{node.name, p};
    }
    default:
      VACC_CHECK(!has_accelerator_layer(node.op)) << graph::op_name(node.op) << " has no layer";
      return reject(why, no_intrinsic(node.op));
  }
}

bool has_accelerator_layer(graph::OpKind op) {
  using graph::OpKind;
  for (OpKind k : {OpKind::kQConv, OpKind::kQDense, OpKind::kQMatMul, OpKind::kQAdd,
                   OpKind::kMaxPool, OpKind::kQAveragePool})
    if (op == k) return true;
  return false;
}

std::optional<std::string> why_not_accelerated(const graph::Node &node, const isa::HwConfig &c,
                                               int vthreads) {
  using graph::OpKind;
  const bool pool = node.op == OpKind::kMaxPool || node.op == OpKind::kQAveragePool;
  if (!has_accelerator_layer(node.op)) return no_intrinsic(node.op);
  if (c.inp_bits != 8 || c.wgt_bits != 8 || c.acc_bits != 32)
    return fmt::format(
        "the config's widths (inp {}, wgt {}, acc {}) are not the quantizer's int8/int8/int32",
        c.inp_bits, c.wgt_bits, c.acc_bits);
  // vacc.QMatMul's second operand is an activation, packed on the host at run time.
  if (node.op != OpKind::kQAdd && node.op != OpKind::kQMatMul && !pool &&
      !node.inputs[1]->is_constant())
    return std::string("weights are not constant");
  if (node.op == graph::OpKind::kQConv) {
    for (int64_t d : node.attrs.get_ints("dilations", {1, 1}))
      if (d != 1) return std::string("dilated convolution");
  }
  // The quantizer's outputs are int8: clip bounds outside it are not its semantics.
  if (node.attrs.get_int("clip_min", -128) < -128 || node.attrs.get_int("clip_max", 127) > 127)
    return std::string("clip bounds outside int8");
  if (node.op == OpKind::kQConv && node.attrs.has("pool_kernel_shape")) {
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
  std::string why;
  const std::optional<Layer> layer = layer_of(node, c, &why);
  if (!layer) return why;
  try {
    std::visit(
        [&](const auto &p) {
          check_supported(c, p, layer->name);
          default_schedule(c, p, vthreads, layer->name);
        },
        layer->params);
  } catch (const Error &e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

graph::AccelLegality accel_legality(const isa::HwConfig &config, int vthreads) {
  return [config, vthreads](const graph::Node &node) {
    return why_not_accelerated(node, config, vthreads);
  };
}

bool folds_windows(const graph::Node &node, const isa::HwConfig &c, int vthreads) {
  if (node.op != graph::OpKind::kQConv || node.inputs[0]->layout.blocked) return false;
  if (node.attrs.get_int("group", 1) != 1) return false;  // its windows would mix the groups
  const std::optional<Layer> layer = layer_of(node, c, nullptr);
  if (!layer) return false;
  Conv2dParams p = std::get<Conv2dParams>(layer->params);
  p.in_channels = node.inputs[0]->shape[1];  // the model's channels, before the block padding
  if (!should_fold(c, p)) return false;
  const Conv2dParams folded = folded_conv(c, p);
  try {
    check_supported(c, folded, layer->name);
    default_schedule(c, folded, vthreads, layer->name);
  } catch (const Error &) {
    return false;
  }
  return true;
}

graph::WindowFolding window_folding(const isa::HwConfig &config, int vthreads) {
  return
      [config, vthreads](const graph::Node &node) { return folds_windows(node, config, vthreads); };
}

}  // namespace vacc::lower
