// MaxPool, AveragePool and GlobalAveragePool on the blocked layout
// (graph/passes/block_cpu_layout.h), written directly as loop IR with the channels of a block
// in the vector. MaxPool and AveragePool keep a register tile of output columns of one row;
// kernel rows outside the input are skipped by a test per row and kernel columns outside it are
// never emitted at the edges (row_tiles.h), so no padded copy is made. AveragePool divides by
// the whole window (the cases blocked: no padding, or padding counted, and no window past the
// padded input). GlobalAveragePool sums each block's positions in a vector.
#include "graph/window.h"
#include "ops/cpu/common.h"
#include "ops/cpu/row_tiles.h"
#include "vacc/graph/passes/block_cpu_layout.h"
#include "vacc/tir/node.h"

namespace vacc::ops::cpu {

namespace {

using tir::Buffer;
using tir::ForKind;
using tir::Stmt;
using tir::Var;

// MaxPool, or AveragePool when `average`.
CpuKernel blocked_window_pool(const Node &node, bool average) {
  const graph::Value &xv = *node.inputs[0];
  const Shape &xs = xv.shape;  // [N, CB, H, W, 1, B]
  const DataType t = tir_type(xv.dtype);
  const int64_t N = xs[0], CB = xs[1], H = xs[2], W = xs[3], B = xs[5];
  const graph::Window w =
      graph::make_window(node.attrs, {H, W}, node.attrs.get_ints("kernel_shape"),
                         node.attrs.get_int("ceil_mode", 0) != 0);
  const int64_t OH = w.out[0], OW = w.out[1], KH = w.kernel[0], KW = w.kernel[1];
  const Buffer x = tir::make_buffer("x", t, {N, CB, H, W, B});
  const Buffer y = tir::make_buffer("y", t, {N, CB, OH, OW, B});
  const RowWindow cols{OW, W, KW, w.stride[1], w.dilation[1], w.pad_begin[1]};
  const std::vector<TileRun> runs = plan_row_tiles(cols, 8);
  const bool rows_reach_out =
      w.pad_begin[0] > 0 || (OH - 1) * w.stride[0] + (KH - 1) * w.dilation[0] - w.pad_begin[0] >= H;

  Var p = tir::make_var("p");
  const Expr n = Expr(p) / to_int(CB * OH), cb = Expr(p) / to_int(OH) % to_int(CB),
             oh = Expr(p) % to_int(OH);
  Stmt row = emit_row_tiles(cols, runs, [&](const auto &col, int64_t width, const auto &inside) {
    const Buffer acc = tir::make_buffer("acc", t, {width, B}, tir::Scope::kLocal);
    std::vector<Stmt> s;
    for (int64_t r = 0; r < width; ++r) {
      Var v = tir::make_var("v");
      s.push_back(tir::For::make(
          v, B, ForKind::kVectorized,
          tir::Store::make(acc, {to_int(r), v}, average ? fconst(t, 0.0) : lowest(t))));
    }
    Var kh = tir::make_var("kh");
    const Expr ih =
        oh * to_int(w.stride[0]) + Expr(kh) * to_int(w.dilation[0]) - to_int(w.pad_begin[0]);
    std::vector<Stmt> taps;
    for (int64_t kw = 0; kw < KW; ++kw)
      for (int64_t r = 0; r < width; ++r) {
        if (!inside(r, kw)) continue;
        const Expr iw = col(r) * to_int(w.stride[1]) + to_int(kw * w.dilation[1] - w.pad_begin[1]);
        Var v = tir::make_var("v");
        const std::vector<Expr> at = {to_int(r), v};
        const Expr a = tir::load(acc, at), xv = tir::load(x, {n, cb, ih, iw, v});
        taps.push_back(
            tir::For::make(v, B, ForKind::kVectorized,
                           tir::Store::make(acc, at, average ? a + xv : tir::max(a, xv))));
      }
    Stmt body = tir::Seq::make(taps);
    if (rows_reach_out) body = tir::IfThenElse::make(ih >= 0 && ih < to_int(H), body);
    s.push_back(tir::For::make(kh, KH, ForKind::kSerial, body));
    for (int64_t r = 0; r < width; ++r) {
      Var v = tir::make_var("v");
      Expr value = tir::load(acc, {to_int(r), v});
      if (average) value = value * fconst(t, 1.0 / static_cast<double>(KH * KW));
      s.push_back(tir::For::make(v, B, ForKind::kVectorized,
                                 tir::Store::make(y, {n, cb, oh, col(r), v}, value)));
    }
    return tir::Allocate::make(acc, tir::Seq::make(s));
  });
  CpuKernel k;
  k.func = tir::Func{average ? "AveragePool" : "MaxPool",
                     {x, y},
                     tir::For::make(p, N * CB * OH, ForKind::kParallel, row)};
  return k;
}

CpuKernel blocked_global_average_pool(const Node &node) {
  const Shape &xs = node.inputs[0]->shape;  // [N, CB, H, W, 1, B]
  const int64_t N = xs[0], CB = xs[1], B = xs.back();
  int64_t positions = 1;
  for (size_t d = 2; d + 2 < xs.size(); ++d) positions *= xs[d];
  const Buffer x = tir::make_buffer("x", tir::float32(), {N * CB, positions, B});
  const Buffer y = tir::make_buffer("y", tir::float32(), {N * CB, B});
  const Buffer acc = tir::make_buffer("acc", tir::float32(), {B}, tir::Scope::kLocal);
  Var p = tir::make_var("p"), i = tir::make_var("i"), v0 = tir::make_var("v"),
      v1 = tir::make_var("v"), v2 = tir::make_var("v");
  const Stmt body = tir::Allocate::make(
      acc,
      tir::Seq::make(
          {tir::For::make(v0, B, ForKind::kVectorized,
                          tir::Store::make(acc, {v0}, fconst(tir::float32(), 0))),
           tir::For::make(
               i, positions, ForKind::kSerial,
               tir::For::make(
                   v1, B, ForKind::kVectorized,
                   tir::Store::make(acc, {v1}, tir::load(acc, {v1}) + tir::load(x, {p, i, v1})))),
           tir::For::make(
               v2, B, ForKind::kVectorized,
               tir::Store::make(y, {p, v2},
                                tir::load(acc, {v2}) /
                                    fconst(tir::float32(), static_cast<double>(positions))))}));
  CpuKernel k;
  k.func = tir::Func{
      "GlobalAveragePool",
      {x, y},
      tir::For::make(p, N * CB, N * CB >= 8 ? ForKind::kParallel : ForKind::kSerial, body)};
  return k;
}

}  // namespace

std::optional<CpuKernel> build_blocked_pool(const Node &node) {
  const graph::Value &xv = *node.inputs.at(0);
  if (!xv.layout.blocked || xv.rank() != 6) return std::nullopt;
  if (node.op == graph::OpKind::kMaxPool) return blocked_window_pool(node, false);
  if (node.op == graph::OpKind::kAveragePool && graph::blocked_average_pool_supported(node))
    return blocked_window_pool(node, true);
  if (node.op == graph::OpKind::kGlobalAveragePool) return blocked_global_average_pool(node);
  return std::nullopt;
}

}  // namespace vacc::ops::cpu
