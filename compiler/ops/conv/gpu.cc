// 2-D convolution (NCHW) on the GPU as a tiled implicit matrix product: output channels x output
// pixels (the pixels flattened, so tiles stay affine), each block 16x16 threads with a register
// tile each; per block of 8 input channels the block's weight tile [channels, 8, kh, kw] is
// staged in shared memory; the input is read through the cache with zero padding from guards.
#include "graph/window.h"
#include "ops/gpu/common.h"
#include "vacc/schedule/to_loop_ir.h"
#include "vacc/support/error.h"

namespace vacc::ops::gpu {

tir::Func conv2d(const Conv2dShape &c, bool has_bias) {
  const int64_t oh = c.out_h(), ow = c.out_w(), pixels = oh * ow;
  if (c.groups <= 0 || c.c % c.groups != 0 || c.m % c.groups != 0 || oh <= 0 || ow <= 0) {
    fail(
        "GPU conv2d: inconsistent shape (channels {}, output channels {}, groups {}, output {}x{})",
        c.c, c.m, c.groups, oh, ow);
  }
  const int64_t cg = c.c / c.groups, mg = c.m / c.groups;
  Tensor x = te::placeholder("x", {c.n, c.c, c.h, c.w}, tir::float32());
  Tensor w = te::placeholder("w", {c.m, cg, c.kh, c.kw}, tir::float32());
  Tensor bias = has_bias ? te::placeholder("bias", {c.m}, tir::float32()) : nullptr;
  const int OW = static_cast<int>(ow);
  Tensor acc = te::reduce_sum(
      "acc", {c.n, c.m, pixels}, {{"rc", cg}, {"rkh", c.kh}, {"rkw", c.kw}},
      [&](const auto &i, const auto &r) {
        Expr ch = c.groups == 1 ? Expr(r[0])
                                : (Expr(i[1]) / static_cast<int>(mg)) * static_cast<int>(cg) + r[0];
        Expr y = (Expr(i[2]) / OW) * static_cast<int>(c.stride_h) +
                 Expr(r[1]) * static_cast<int>(c.dilation_h) - static_cast<int>(c.pad_top);
        Expr xx = (Expr(i[2]) % OW) * static_cast<int>(c.stride_w) +
                  Expr(r[2]) * static_cast<int>(c.dilation_w) - static_cast<int>(c.pad_left);
        return (*x)({i[0], ch, y, xx}) * (*w)({i[1], r[0], r[1], r[2]});
      });
  Tensor out = te::compute("y", {c.n, c.m, pixels}, [&](const auto &i) {
    Expr v = (*acc)({i[0], i[1], i[2]});
    return bias ? v + (*bias)({i[1]}) : v;
  });

  const int64_t rows = c.m >= 4 * kTile ? 4 : 1, cols = pixels >= 4 * kTile ? 4 : 1;
  const int64_t chunk = std::min<int64_t>(cg, 8);
  schedule::Schedule s({out});
  schedule::Stage &so = s[out];
  auto [by, mi] = so.split(so.axis()[1], kTile * rows);
  auto [bx, pi] = so.split(so.axis()[2], kTile * cols);
  auto [ty, ri] = so.split(mi, rows);
  auto [tx, ci] = so.split(pi, cols);
  te::IterVar bz = so.axis()[0];
  so.reorder({bz, by, bx, ty, tx, ri, ci});
  so.bind(bz, "blockIdx.z");
  so.bind(by, "blockIdx.y");
  so.bind(bx, "blockIdx.x");
  so.bind(ty, "threadIdx.y");
  so.bind(tx, "threadIdx.x");
  so.unroll(ri);
  so.unroll(ci);

  schedule::Stage &sa = s[acc];
  sa.set_scope(tir::Scope::kLocal);
  sa.compute_at(so, bx);
  auto [aty, ari] = sa.split(sa.axis()[1], rows);
  auto [atx, aci] = sa.split(sa.axis()[2], cols);
  auto [co, cin] = sa.split(sa.reduce_axis()[0], chunk);
  sa.reorder({sa.axis()[0], co, aty, atx, cin, sa.reduce_axis()[1], sa.reduce_axis()[2], ari, aci});
  sa.bind(aty, "threadIdx.y");
  sa.bind(atx, "threadIdx.x");
  sa.unroll(ari);
  sa.unroll(aci);

  Tensor ws = s.cache_read(w, tir::Scope::kShared, {acc});
  s[ws].compute_at(sa, co);
  cooperative_copy(s, ws);

  std::vector<Tensor> args = {x, w};
  if (bias) args.push_back(bias);
  args.push_back(out);
  // The output [n, m, oh * ow] has the bytes of NCHW [n, m, oh, ow].
  return schedule::to_loop_ir(s, "conv2d", args);
}

namespace {

std::string conv_node(const Node &node, GpuNodeKernel *k) {
  const graph::Value &x = *node.inputs.at(0), &w = *node.inputs.at(1);
  const graph::Shape &out = node.outputs[0]->shape;
  if (node.attrs.has("activation_min") || node.attrs.has("activation_max"))
    return "a fused activation (activation_min/activation_max)";
  if (node.attrs.has("activation"))
    return "a fused activation (" + node.attrs.get_string("activation", "") + ")";
  if (x.rank() != 4) return "a rank-" + std::to_string(x.rank()) + " input (2-D only)";
  graph::Window win =
      graph::make_window(node.attrs, {x.shape[2], x.shape[3]}, {w.shape[2], w.shape[3]}, false);
  Conv2dShape c{x.shape[0],     x.shape[1],       x.shape[2],       x.shape[3],
                w.shape[0],     w.shape[2],       w.shape[3],       win.stride[0],
                win.stride[1],  win.pad_begin[0], win.pad_begin[1], win.pad_end[0],
                win.pad_end[1], win.dilation[0],  win.dilation[1],  node.attrs.get_int("group", 1)};
  if (c.out_h() != out[2] || c.out_w() != out[3]) return "this window geometry";
  k->func = conv2d(c, node.input(2) != nullptr);
  return "";
}

}  // namespace

void add_conv_node_kernels(std::vector<GpuLowering> &lowerings) {
  lowerings.push_back({OpKind::kConv, conv_node});
}

}  // namespace vacc::ops::gpu
