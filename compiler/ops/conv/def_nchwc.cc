// vacc.ConvNCHWc: a float 2-D convolution on the CPU backend's blocked layout (NCHWc, made by
// passes/block_cpu_layout.h), as ONNX Runtime's NCHWc transformer runs one.
//
//   X    [N, ceil(C/B), H, W, 1, B], blocked {1, B}; or plain [N, C, H, W] (a graph's first
//        convolution reads its few-channel image as it is)
//   W    [M, C/group, KH, KW], ONNX's plain weights (the CPU kernel packs them)
//   B    [M], optional
//   Sum  optional: a fused residual add, of the output's shape and layout, added before the
//        activation (passes/fuse_residual_adds.h)
//   Y    [N, ceil(M/B), OH, OW, 1, B], blocked {1, B}
//
// Attributes: Conv's (kernel_shape, strides, pads, dilations, group), the fused activation
// (activation_min / activation_max; or activation "silu", y * sigmoid(y), or "hardswish",
// y * clamp(activation_alpha * y + activation_beta, 0, 1)) and block_c = B.
// Y = act(conv(X, W) + B + Sum). Channels past C in X are never read; channels past M in Y
// hold whatever the kernel computes there (readers of a blocked value never look at them:
// convolutions reduce over the real channels, vacc.UnpackNCHWnc crops them).
#include "graph/registry/families.h"
#include "graph/window.h"

namespace vacc::graph::ops {

namespace {

// x as plain [N, channels, S...] (cropped to the real channels when it is blocked).
Tensor plain_input(const Value &v, const Tensor &x, int64_t channels) {
  if (!v.layout.blocked) return x;
  Shape plain = unblocked_shape(x.shape());
  plain[1] = channels;
  return unblock_tensor(x, plain);
}

Outputs conv_nchwc(const Node &node, const Inputs &in) {
  const Tensor &w = *in[1];
  const int64_t group = node.attrs.get_int("group", 1);
  const Tensor x = plain_input(*node.inputs[0], *in[0], w.dim(1) * group);
  const Tensor *b = in.size() > 2 ? in[2] : nullptr;
  const bool has_sum = in.size() > 3 && in[3];
  const Tensor sum = has_sum ? plain_input(*node.inputs[3], *in[3], w.dim(0)) : Tensor();
  const Tensor y = float_conv(node, x, w, b, has_sum ? &sum : nullptr);
  Outputs outs;
  outs.push_back(block_tensor(y, 1, node.attrs.get_int("block_c")));
  return outs;
}

void infer_conv_nchwc(Node &n) {
  const Value &x = input_of(n, 0, "X"), &w = input_of(n, 1, "W");
  require_dtype(x, "X", DType::kFloat32);
  require_dtype(w, "W", DType::kFloat32);
  const int64_t bc = n.attrs.get_int("block_c", 0);
  if (bc <= 0) fail("attribute 'block_c' must be positive, got {}", bc);
  if (w.rank() != 4)
    fail("weight '{}' has shape {}, expected [M, C/group, KH, KW]", w.name, shape_str(w.shape));
  const int64_t group = n.attrs.get_int("group", 1);
  if (group <= 0 || w.shape[0] % group != 0)
    fail("output channels {} are not a multiple of group {}", w.shape[0], group);
  const int64_t C = w.shape[1] * group, M = w.shape[0];
  Shape xs = x.shape;
  if (x.layout.blocked) {
    if (x.rank() != 6 || x.layout.block_n != 1 || x.layout.block_c != bc || xs[4] != 1 ||
        xs[5] != bc)
      fail("input '{}' {} is not blocked as [N, C/{}, H, W, 1, {}]", x.name, shape_str(xs), bc, bc);
    if (xs[1] != (C + bc - 1) / bc)
      fail("input '{}' has {} channel blocks of {}, the weight '{}' {} reads {} channels", x.name,
           xs[1], bc, w.name, shape_str(w.shape), C);
    xs = {xs[0], C, xs[2], xs[3]};
  } else if (x.rank() != 4 || xs[1] != C) {
    fail("input '{}' {} does not match the weight '{}' {} with group {}", x.name, shape_str(xs),
         w.name, shape_str(w.shape), group);
  }
  check_bias(n.input(2), M);
  const Window win = make_window(n.attrs, {xs[2], xs[3]}, {w.shape[2], w.shape[3]}, false);
  const Shape out = blocked_shape({xs[0], M, win.out[0], win.out[1]}, 1, bc);
  if (const Value *sum = n.input(3)) {
    if (sum->dtype != DType::kFloat32 || sum->shape != out || !sum->layout.blocked)
      fail("the sum '{}' {} {} must be float32 blocked like the output {}", sum->name,
           dtype_name(sum->dtype), shape_str(sum->shape), shape_str(out));
  }
  set_out(n, 0, DType::kFloat32, out);
  if (n.outputs[0]) n.outputs[0]->layout = {true, 1, static_cast<int>(bc)};
}

// The model's own multiply-accumulates: the real output channels, not the padded blocks.
int64_t conv_nchwc_macs(const Node &node) {
  const Shape &y = node.outputs[0]->shape, &w = node.inputs[1]->shape;
  return y[0] * y[2] * y[3] * w[0] * w[1] * w[2] * w[3];
}

}  // namespace

void add_conv_nchwc_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kConvNCHWc,
                  .name = "vacc.ConvNCHWc",
                  .infer = infer_conv_nchwc,
                  .reference = conv_nchwc,
                  .macs = conv_nchwc_macs});
}

}  // namespace vacc::graph::ops
