// The blocked NCHWnc layout of the accelerator's operands: plain [N, C, S...] becomes
// [ceil(N/bn), ceil(C/bc), S..., bn, bc], zero-filled where N or C is not a multiple of the
// block. Weights [O, I, kh, kw] use the same form with O as "N" and I as "C". With a window
// (kernel_shape, strides, pads, dilations as a convolution's), the pack first unfolds every
// output position's window into channels (im2col): [N, C, H, W] becomes
// [N, C*kh*kw, OH, OW], channel (c*kh + y)*kw + x, zero where the window reads padding. With
// replicate_pads [top, left, bottom, right] the unfolded grid grows by that many copies of its
// edge rows and columns (output row r holds the windows of row clamp(r - top, 0, OH - 1)): a
// max pool fused after the convolution (graph/passes/fuse_pools.h) then needs no padding.
#include <algorithm>
#include <cstring>

#include "../window.h"
#include "ops.h"
#include "vacc/support/blocked_layout.h"

namespace vacc::graph::ops {

Shape blocked_shape(const Shape &plain, int64_t block_n, int64_t block_c) {
  VACC_CHECK(plain.size() >= 2) << "blocked_shape of rank " << plain.size();
  Shape out = {(plain[0] + block_n - 1) / block_n, (plain[1] + block_c - 1) / block_c};
  out.insert(out.end(), plain.begin() + 2, plain.end());
  out.push_back(block_n);
  out.push_back(block_c);
  return out;
}

Shape unblocked_shape(const Shape &blocked) {
  VACC_CHECK(blocked.size() >= 4) << "unblocked_shape of rank " << blocked.size();
  size_t r = blocked.size();
  Shape out = {blocked[0] * blocked[r - 2], blocked[1] * blocked[r - 1]};
  out.insert(out.end(), blocked.begin() + 2, blocked.end() - 2);
  return out;
}

namespace {
// Copies between plain (cropped to `plain` shape) and blocked forms.
void move_blocks(const Shape &plain, const Shape &blocked, int es, const uint8_t *src, uint8_t *dst,
                 bool to_blocked) {
  size_t r = blocked.size();
  int64_t bn = blocked[r - 2], bc = blocked[r - 1], cb = blocked[1];
  int64_t inner = 1;
  for (size_t i = 2; i < plain.size(); ++i) inner *= plain[i];
  for (int64_t n = 0; n < plain[0]; ++n)
    for (int64_t c = 0; c < plain[1]; ++c)
      for (int64_t s = 0; s < inner; ++s) {
        int64_t p = (n * plain[1] + c) * inner + s;
        int64_t b = blocked_offset(n, c, s, inner, bn, bc, cb);
        if (to_blocked)
          std::memcpy(dst + b * es, src + p * es, es);
        else
          std::memcpy(dst + p * es, src + b * es, es);
      }
}
}  // namespace

Tensor block_tensor(const Tensor &plain, int64_t block_n, int64_t block_c) {
  Tensor out(plain.dtype(), blocked_shape(plain.shape(), block_n, block_c));
  move_blocks(plain.shape(), out.shape(), dtype_size(plain.dtype()), plain.raw(), out.raw(), true);
  return out;
}

Tensor unblock_tensor(const Tensor &blocked, const Shape &plain_shape) {
  Tensor out(blocked.dtype(), plain_shape);
  move_blocks(plain_shape, blocked.shape(), dtype_size(blocked.dtype()), blocked.raw(), out.raw(),
              false);
  return out;
}

namespace {
Window unfold_window(const Shape &x, const Attributes &attrs) {
  if (x.size() != 4) fail("a windowed pack takes an [N, C, H, W] input, got {}", shape_str(x));
  return make_window(attrs, {x[2], x[3]}, attrs.get_ints("kernel_shape"), false);
}
}  // namespace

std::vector<int64_t> replicate_pads(const Attributes &attrs) {
  const std::vector<int64_t> r = attrs.get_ints("replicate_pads", {0, 0, 0, 0});
  if (r.size() != 4 || std::any_of(r.begin(), r.end(), [](int64_t v) { return v < 0; }))
    fail("attribute 'replicate_pads' must be 4 non-negative values");
  return r;
}

Shape unfolded_shape(const Shape &x, const Attributes &attrs) {
  if (!attrs.has("kernel_shape")) return x;
  const Window w = unfold_window(x, attrs);
  const std::vector<int64_t> r = replicate_pads(attrs);
  return {x[0], x[1] * w.kernel[0] * w.kernel[1], w.out[0] + r[0] + r[2], w.out[1] + r[1] + r[3]};
}

Tensor unfold_windows(const Tensor &x, const Attributes &attrs) {
  const Window w = unfold_window(x.shape(), attrs);
  Tensor out(x.dtype(), unfolded_shape(x.shape(), attrs));
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t KH = w.kernel[0], KW = w.kernel[1], OH = w.out[0], OW = w.out[1];
  const int64_t EH = out.dim(2), EW = out.dim(3);  // with the replicated edges
  const std::vector<int64_t> r = replicate_pads(attrs);
  const int es = dtype_size(x.dtype());
  std::memset(out.raw(), 0, out.nbytes());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ky = 0; ky < KH; ++ky)
        for (int64_t kx = 0; kx < KW; ++kx) {
          const int64_t f = (c * KH + ky) * KW + kx;
          for (int64_t ey = 0; ey < EH; ++ey) {
            const int64_t oy = std::clamp<int64_t>(ey - r[0], 0, OH - 1);
            const int64_t y = oy * w.stride[0] + ky * w.dilation[0] - w.pad_begin[0];
            if (y < 0 || y >= H) continue;
            for (int64_t ex = 0; ex < EW; ++ex) {
              const int64_t ox = std::clamp<int64_t>(ex - r[1], 0, OW - 1);
              const int64_t xx = ox * w.stride[1] + kx * w.dilation[1] - w.pad_begin[1];
              if (xx < 0 || xx >= W) continue;
              std::memcpy(out.raw() + (((n * C * KH * KW + f) * EH + ey) * EW + ex) * es,
                          x.raw() + (((n * C + c) * H + y) * W + xx) * es, es);
            }
          }
        }
  return out;
}

Outputs pack_nchwnc(const Node &node, const Inputs &in) {
  Outputs outs;
  const int64_t bn = node.attrs.get_int("block_n"), bc = node.attrs.get_int("block_c");
  if (node.attrs.has("kernel_shape"))
    outs.push_back(block_tensor(unfold_windows(*in[0], node.attrs), bn, bc));
  else
    outs.push_back(block_tensor(*in[0], bn, bc));
  return outs;
}

Outputs unpack_nchwnc(const Node &node, const Inputs &in) {
  Outputs outs;
  outs.push_back(unblock_tensor(*in[0], node.attrs.get_ints("shape")));
  return outs;
}

}  // namespace vacc::graph::ops

namespace vacc::graph::ops {
namespace {

void infer_pack(Node &n) {
  Value &x = input_of(n, 0, "x");
  if (x.rank() < 2) fail("input has rank {}, expected at least 2", x.rank());
  int64_t bn = n.attrs.get_int("block_n"), bc = n.attrs.get_int("block_c");
  set_out(n, 0, x.dtype, blocked_shape(unfolded_shape(x.shape, n.attrs), bn, bc));
  if (n.outputs[0]) n.outputs[0]->layout = {true, int(bn), int(bc)};
}

void infer_unpack(Node &n) {
  Value &x = input_of(n, 0, "x");
  Shape out = n.attrs.get_ints("shape");
  int64_t bn = n.attrs.get_int("block_n"), bc = n.attrs.get_int("block_c");
  if (out.size() + 2 != x.shape.size() || x.shape[x.rank() - 2] != bn || x.shape.back() != bc) {
    fail("input {} is not a blocked form of {}", shape_str(x.shape), shape_str(out));
  }
  set_out(n, 0, x.dtype, out);
}

}  // namespace

void add_layout_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kPackNCHWnc,
                  .name = "vacc.PackNCHWnc",
                  .infer = infer_pack,
                  .reference = pack_nchwnc});
  defs.push_back({.op = OpKind::kUnpackNCHWnc,
                  .name = "vacc.UnpackNCHWnc",
                  .infer = infer_unpack,
                  .reference = unpack_nchwnc});
}

}  // namespace vacc::graph::ops
