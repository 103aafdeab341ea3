// Float 2-D convolution with output channels in the vectors: for each step of the reduction
// (input channel, kernel row, kernel column) a register tile of V output channels (the vector,
// one or two registers) x R output columns (unrolled) takes one vector of weights and R
// broadcast inputs. The weights are packed on the host once, at kernel build time, into
// panels [Mp/V, C, KH, KW, V] so that the vector is one contiguous load (ONNX Runtime and
// oneDNN prepack the same way). Strided convolutions read their inputs as scalars, never as
// gathers, and narrow outputs (7, 13, 14 columns) fill the vectors all the same, which the
// column-vectorized schedule of cpu.cc cannot do; it stays for wide stride-1 layers (1x1 too),
// depthwise and grouped convolutions and non-constant weights.
//
// Widths that no good R divides (SqueezeNet's 109 and 13) and channel counts that are no
// multiple of the vector (1000) are computed on a padded output [N, Mp, OH, OWp] (weights
// zero-padded, input padded further), then copied into the real one, a pass over the output
// that costs far less than the gathers it avoids.
#include <cstring>

#include "graph/window.h"
#include "ops/cpu/common.h"

namespace vacc::ops::cpu {

namespace {

// The register tile: V channels (one or two vectors) and R columns; the padded extents.
struct ChannelTile {
  int64_t channels = 0, columns = 0, padded_channels = 0, padded_width = 0;
};

int64_t round_up(int64_t n, int64_t m) {
  return (n + m - 1) / m * m;
}

ChannelTile channel_tile(int64_t M, int64_t OW, int64_t lanes) {
  ChannelTile t;
  t.channels = M % (2 * lanes) == 0 ? 2 * lanes : lanes;
  t.padded_channels = round_up(M, t.channels);
  // Up to 24 accumulator registers of the 32 (AVX-512; the weight vectors, the broadcast and
  // LLVM's spare registers use the rest): the widest column count dividing the output's
  // width, else the one that pads it least.
  int64_t regs = t.channels / lanes;
  int64_t limit = std::min<int64_t>(14, 24 / regs);
  t.columns = divisor_at_most(OW, limit);
  if (t.columns < 6 && OW > t.columns) {
    t.columns = limit;
    for (int64_t r = limit; r >= 6; --r)
      if (round_up(OW, r) < round_up(OW, t.columns)) t.columns = r;
  }
  t.padded_width = round_up(OW, t.columns);
  return t;
}

}  // namespace

Expr fused_activation(const Node &node, Expr v) {
  const DataType t = v.dtype();
  if (node.attrs.has("activation_min"))
    v = tir::max(v, fconst(t, node.attrs.get_float("activation_min", 0)));
  if (node.attrs.has("activation_max"))
    v = tir::min(v, fconst(t, node.attrs.get_float("activation_max", 0)));
  const std::string gate = node.attrs.get_string("activation", "");
  if (gate == "hardswish")
    v = v * hard_sigmoid(v, node.attrs.get_float("activation_alpha", 0.2f),
                         node.attrs.get_float("activation_beta", 0.5f));
  if (gate == "silu") v = v * sigmoid(v);
  return v;
}

Expr hard_sigmoid(const Expr &v, double alpha, double beta) {
  const DataType t = v.dtype();
  return tir::max(fconst(t, 0.0), tir::min(fconst(t, 1.0), v * fconst(t, alpha) + fconst(t, beta)));
}

Expr sigmoid(const Expr &v) {
  const DataType t = v.dtype();
  const Expr zero = fconst(t, 0.0), one = fconst(t, 1.0);
  const Expr e = tir::Call::make(tir::CallOp::kExp, {tir::select(v >= zero, zero - v, v)});
  return tir::select(v >= zero, one / (one + e), e / (one + e));
}

std::optional<CpuKernel> build_conv_channel_tile(const Node &node) {
  if (node.op != graph::OpKind::kConv) return std::nullopt;
  KernelBuilder kb(node);
  const graph::Value &xv = kb.in_value(0), &wv = kb.in_value(1);
  if (xv.dtype != graph::DType::kFloat32 || xv.rank() != 4 || xv.layout.blocked ||
      !wv.is_constant() || node.attrs.get_int("group", 1) != 1)
    return std::nullopt;
  const Shape &xs = xv.shape, &ws = wv.shape;
  int64_t N = xs[0], C = xs[1], M = ws[0];
  if (ws[1] != C) return std::nullopt;
  graph::Window w = graph::make_window(node.attrs, {xs[2], xs[3]}, {ws[2], ws[3]}, false);
  const int64_t OH = w.out[0], OW = w.out[1], KH = w.kernel[0], KW = w.kernel[1];
  // Wide stride-1 layers (pointwise ones too) vectorize well along their columns with
  // contiguous stores (cpu.cc); the rest come here.
  const bool strided = w.stride[0] > 1 || w.stride[1] > 1;
  if (!strided && OW >= 48) return std::nullopt;
  const ChannelTile tile = channel_tile(M, OW, native_lanes(tir::float32()));
  const int64_t V = tile.channels, R = tile.columns, Mp = tile.padded_channels,
                OWp = tile.padded_width;

  // Panels [Mp/V, C, KH, KW, V] of the OIHW weights, zero past M.
  const graph::Tensor &src = *wv.constant;
  graph::Tensor packed(graph::DType::kFloat32, {Mp / V, C, KH, KW, V});
  std::memset(packed.raw(), 0, packed.nbytes());
  const float *s = src.data<float>();
  float *d = packed.data<float>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t k = 0; k < KH * KW; ++k)
        d[(((m / V) * C + c) * KH * KW + k) * V + m % V] = s[(m * C + c) * KH * KW + k];

  Tensor x = kb.input(0);
  Tensor bias = kb.has_input(2) ? kb.input(2) : nullptr;
  Tensor panels = kb.constant_param("w_panels", std::move(packed));

  // The padded input, when the windows (of the padded width) reach past the input's edges.
  const int64_t need_h = (OH - 1) * w.stride[0] + (KH - 1) * w.dilation[0] + 1;
  const int64_t need_w = (OWp - 1) * w.stride[1] + (KW - 1) * w.dilation[1] + 1;
  const bool padded = w.pad_begin[0] || w.pad_begin[1] || need_h > xs[2] || need_w > xs[3];
  Tensor xp = x;
  if (padded) {
    const int ph = static_cast<int>(w.pad_begin[0]), pw = static_cast<int>(w.pad_begin[1]);
    xp = te::compute("xpad", {N, C, need_h, need_w}, [&](const std::vector<tir::Var> &i) {
      Expr h = Expr(i[2]) - ph, c = Expr(i[3]) - pw;
      Expr inside = h >= 0 && h < static_cast<int>(xs[2]) && c >= 0 && c < static_cast<int>(xs[3]);
      return tir::select(inside, (*x)({i[0], i[1], h, c}), fconst(tir::float32(), 0));
    });
  }
  const int sh = static_cast<int>(w.stride[0]), sw = static_cast<int>(w.stride[1]);
  const int dh = static_cast<int>(w.dilation[0]), dw = static_cast<int>(w.dilation[1]);
  const int v = static_cast<int>(V);
  // The accumulator with channels innermost ([N, OH, OWp, Mp]), so that its register tile's
  // vectors are contiguous.
  Tensor acc =
      te::reduce_sum("acc", {N, OH, OWp, Mp}, {{"rc", C}, {"rkh", KH}, {"rkw", KW}},
                     [&](const std::vector<tir::Var> &i, const std::vector<tir::Var> &r) {
                       Expr xe = (*xp)({i[0], r[0], Expr(i[1]) * sh + Expr(r[1]) * dh,
                                        Expr(i[2]) * sw + Expr(r[2]) * dw});
                       Expr we = (*panels)({Expr(i[3]) / v, r[0], r[1], r[2], Expr(i[3]) % v});
                       return xe * we;
                     });
  const bool exact = Mp == M && OWp == OW;
  Tensor tiled =
      te::compute(exact ? "y" : "ypad", {N, Mp, OH, OWp}, [&](const std::vector<tir::Var> &i) {
        Expr a = (*acc)({i[0], i[2], i[3], i[1]});
        if (bias) {
          Expr m = Mp == M ? Expr(i[1]) : tir::min(Expr(i[1]), static_cast<int>(M - 1));
          a = a + (*bias)({m});
        }
        return fused_activation(node, a);
      });
  Tensor out = tiled;
  if (!exact) {
    out = te::compute("y", {N, M, OH, OW}, [&](const std::vector<tir::Var> &i) {
      return (*tiled)({i[0], i[1], i[2], i[3]});
    });
  }

  // The tile stage: N, Mp/V, OH, OWp/R | R (unrolled), V (vectorized); parallel over N, Mp/V
  // and OH, in that order, so that a thread's rows reuse one weight panel from its cache.
  schedule::Schedule sched({out});
  if (padded) schedule_elementwise(sched, xp);
  schedule::Stage &so = sched[tiled];
  const auto axes = so.axis();
  auto [mo, mi] = so.split(axes[1], V);
  auto [wo, wi] = so.split(axes[3], R);
  so.reorder({axes[0], mo, axes[2], wo, wi, mi});
  so.unroll(wi);
  so.vectorize(mi);
  schedule::Stage &sa = sched[acc];
  sa.compute_at(so, wo);
  const auto &aaxes = sa.axis();
  std::vector<te::IterVar> aorder = {aaxes[0], aaxes[1]};
  for (const auto &r : sa.reduce_axis()) aorder.push_back(r);
  aorder.push_back(aaxes[2]);
  aorder.push_back(aaxes[3]);
  sa.reorder(aorder);
  sa.unroll(aaxes[2]);
  sa.vectorize(aaxes[3]);
  te::IterVar par = so.fuse(so.fuse(axes[0], mo), axes[2]);
  so.parallel(par);
  if (!exact) schedule_elementwise(sched, out);
  return kb.finish(sched, out);
}

}  // namespace vacc::ops::cpu
