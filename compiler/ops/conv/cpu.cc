// Convolutions: Conv (float), ConvInteger, QLinearConv and vacc.QConv's int8 reference
// semantics, on 1-, 2- and 3-D spatial shapes (viewed as 3-D with unit extents), with groups
// and depthwise. A padded (and, for integers, zero-point-centered) copy of the input is made
// first so the convolution itself reads without guards; the convolution accumulates a tile of
// output channels x output columns in registers (schedule_reduction) and the output stage adds
// the bias and requantizes. Integer accumulation is int32 with wraparound, as in the reference.
#include "graph/window.h"
#include "ops/cpu/common.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

Shape as_3d(const Shape &s) {  // [N, C, spatial...] -> [N, C, D, H, W]
  Shape r = {s[0], s[1]};
  for (size_t k = s.size(); k < 5; ++k) r.push_back(1);
  r.insert(r.end(), s.begin() + 2, s.end());
  return r;
}
std::vector<int64_t> pad3(const std::vector<int64_t> &v, int64_t fill) {
  std::vector<int64_t> r(3 - v.size(), fill);
  r.insert(r.end(), v.begin(), v.end());
  return r;
}

// ConvTranspose: out[n, m, o] = sum over the group's input channels c and kernel offsets k of
// x[n, c, i] * w[c, m % Mg, k] where o = i*s + k*d - pad, i.e. i = (o + pad - k*d) / s when
// that divides exactly and lands inside the input.
CpuKernel build_conv_transpose(const Node &node) {
  KernelBuilder kb(node);
  const graph::Value &xv = kb.in_value(0), &wv = kb.in_value(1);
  if (xv.rank() < 3 || xv.rank() > 5)
    kb.unsupported("a rank-" + std::to_string(xv.rank()) + " input");
  DataType t = tir_type(xv.dtype);
  if (!t.is_float()) kb.unsupported(a_type(t) + " input");
  std::vector<int64_t> spatial(xv.shape.begin() + 2, xv.shape.end());
  std::vector<int64_t> kernel(wv.shape.begin() + 2, wv.shape.end());
  graph::Window w = graph::make_transpose_window(node.attrs, spatial, kernel);
  std::vector<int64_t> in = pad3(w.in, 1), k = pad3(w.kernel, 1), st = pad3(w.stride, 1),
                       dl = pad3(w.dilation, 1), pb = pad3(w.pad_begin, 0), o = pad3(w.out, 1);
  Shape xs = as_3d(xv.shape), ws = as_3d(wv.shape);
  int64_t N = xs[0], C = xs[1], Mg = ws[1];
  int64_t group = node.attrs.get_int("group", 1);
  if (group <= 0 || C % group != 0 || ws[0] != C) kb.unsupported("inconsistent groups");
  int64_t Cg = C / group, M = Mg * group;
  Shape out_shape = {N, M, o[0], o[1], o[2]};
  Tensor x = kb.input(0, xs), wt = kb.input(1, ws);
  Tensor acc =
      te::reduce_sum("acc", out_shape, {{"rc", Cg}, {"rkd", k[0]}, {"rkh", k[1]}, {"rkw", k[2]}},
                     [&](const std::vector<tir::Var> &i, const std::vector<tir::Var> &r) {
                       Expr m = i[1];
                       Expr c = (m / static_cast<int>(Mg)) * static_cast<int>(Cg) + r[0];
                       Expr cond;
                       std::vector<Expr> xi = {i[0], c};
                       for (int d = 0; d < 3; ++d) {
                         Expr p = Expr(i[2 + d]) + static_cast<int>(pb[d]) -
                                  Expr(r[1 + d]) * static_cast<int>(dl[d]);
                         Expr idx = p / static_cast<int>(st[d]);
                         Expr cd = tir::eq(p % static_cast<int>(st[d]), 0) && idx >= 0 &&
                                   idx < static_cast<int>(in[d]);
                         cond = cond.defined() ? (cond && cd) : cd;
                         xi.push_back(idx);
                       }
                       Expr we = (*wt)({c, m % static_cast<int>(Mg), r[1], r[2], r[3]});
                       return tir::select(cond, (*x)(xi), fconst(t, 0)) * we;
                     });
  Tensor bias = kb.has_input(2) ? kb.input(2) : nullptr;
  Tensor out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
    Expr v = (*acc)({i[0], i[1], i[2], i[3], i[4]});
    return bias ? v + (*bias)({i[1]}) : v;
  });
  schedule::Schedule s({out});
  schedule_reduction(s, acc, out, 1, 4, 4, 64);
  return kb.finish(s, out);
}

}  // namespace

CpuKernel build_conv(const Node &node) {
  using graph::OpKind;
  if (node.op == OpKind::kConvTranspose) return build_conv_transpose(node);
  if (auto tiled = build_conv_channel_tile(node)) return std::move(*tiled);
  KernelBuilder kb(node);
  bool integer = node.op != OpKind::kConv;
  size_t wi = node.op == OpKind::kQLinearConv ? 3 : 1;
  const graph::Value &xv = kb.in_value(0), &wv = kb.in_value(wi);
  // vacc.QConv on blocked (NCHWnc) operands: computed on plain views, blocked again.
  bool blocked = xv.layout.blocked;
  // Fused only where the accelerator runs it (graph/passes/fuse_residual_adds.h).
  if (node.op == OpKind::kQConv && kb.has_input(3)) kb.unsupported("a fused residual add");
  // Likewise a fused max pool (graph/passes/fuse_pools.h).
  if (node.op == OpKind::kQConv && node.attrs.has("pool_kernel_shape"))
    kb.unsupported("a fused max pool");
  if (blocked != wv.layout.blocked || (blocked && node.op != OpKind::kQConv)) {
    kb.unsupported("a mix of packed (NCHWnc) and plain operands");
  }
  Shape xplain = xv.shape, wplain = wv.shape;
  Tensor xb, wb;
  if (blocked) {
    xb = kb.input(0);
    wb = kb.input(wi);
    xb = unblock(xb);
    wb = unblock(wb);
    xplain = xb->shape();
    wplain = wb->shape();
  }
  if (xplain.size() < 3 || xplain.size() > 5) {
    kb.unsupported("a rank-" + std::to_string(xplain.size()) + " input");
  }
  DataType xt = tir_type(xv.dtype);
  if (!integer && !xt.is_float()) kb.unsupported(a_type(xt) + " input");
  if (integer && xt.is_float()) kb.unsupported("a float input");
  std::vector<int64_t> spatial(xplain.begin() + 2, xplain.end());
  std::vector<int64_t> kernel(wplain.begin() + 2, wplain.end());
  graph::Window w = graph::make_window(node.attrs, spatial, kernel, false);
  std::vector<int64_t> in = pad3(w.in, 1), k = pad3(w.kernel, 1), st = pad3(w.stride, 1),
                       dl = pad3(w.dilation, 1), pb = pad3(w.pad_begin, 0), o = pad3(w.out, 1);
  Shape xs = as_3d(xplain), ws = as_3d(wplain);
  int64_t N = xs[0], C = xs[1], M = ws[0], Cg = ws[1];
  int64_t group = node.attrs.get_int("group", 1);
  if (group <= 0 || C != Cg * group || M % group != 0) kb.unsupported("inconsistent groups");
  int64_t Mg = M / group;
  Shape out_shape = {N, M, o[0], o[1], o[2]};

  auto view3 = [&](const Tensor &t, const Shape &s3) {  // a plain stage seen as 3-D spatial
    if (t->shape() == s3) return t;
    return te::compute(t->name + "_3d", s3, [&](const std::vector<tir::Var> &i) {
      std::vector<Expr> idx = {i[0], i[1]};
      for (size_t d = 5 - (t->shape().size() - 2); d < 5; ++d) idx.push_back(i[d]);
      return (*t)(idx);
    });
  };
  Tensor x = blocked ? view3(xb, xs) : kb.input(0, xs);
  Tensor wt = blocked ? view3(wb, ws) : kb.input(wi, ws);
  DataType acc_t = integer ? tir::int32() : xt;

  // Zero points (integer ops): x's is a scalar, w's is a scalar or one per output channel.
  Expr xzp = iconst(tir::int32(), 0);
  Tensor wzp;
  size_t xzp_i = node.op == OpKind::kQLinearConv ? 2 : 2,
         wzp_i = node.op == OpKind::kQLinearConv ? 5 : 3;
  if (node.op == OpKind::kConvInteger || node.op == OpKind::kQLinearConv) {
    if (kb.has_input(xzp_i)) xzp = tir::cast(tir::int32(), (*kb.input(xzp_i, {1}))({0}));
    if (kb.has_input(wzp_i)) wzp = kb.input(wzp_i, {graph::num_elements(kb.in_value(wzp_i).shape)});
  }
  if (node.op == OpKind::kQLinearConv) {
    kb.input(1, {1});
    kb.input(4);
  }

  // The padded, centered input. With a column stride s > 1 its rows are split into s phases
  // ([N, C, D, H, s, ceil(W/s)], phase p holding columns p, p + s, ...), so that the
  // vectorized output columns read contiguous inputs instead of gathers.
  std::vector<int64_t> need(3);
  bool padded = integer;
  for (int d = 0; d < 3; ++d) {
    need[d] = (o[d] - 1) * st[d] + (k[d] - 1) * dl[d] + 1;
    padded |= pb[d] != 0 || need[d] > in[d];
  }
  const int64_t phases = st[2];
  padded |= phases > 1;
  const int64_t phase_w = (need[2] + phases - 1) / phases;
  Tensor xp = x;
  if (padded) {
    Shape ps = {N, C, need[0], need[1]};
    if (phases > 1) ps.push_back(phases);
    ps.push_back(phases > 1 ? phase_w : need[2]);
    xp = te::compute("xpad", ps, [&](const std::vector<tir::Var> &i) {
      Expr cond, v;
      std::vector<Expr> idx = {i[0], i[1]};
      for (int d = 0; d < 3; ++d) {
        Expr at = d < 2 || phases == 1 ? Expr(i[2 + d])
                                       : Expr(i[5]) * static_cast<int>(phases) + Expr(i[4]);
        Expr p = at - static_cast<int>(pb[d]);
        idx.push_back(p);
        Expr c = p >= 0 && p < static_cast<int>(in[d]);
        cond = cond.defined() ? (cond && c) : c;
      }
      v = (*x)(idx);
      if (integer) v = tir::cast(tir::int32(), v) - xzp;
      return tir::select(cond, v, iconst(acc_t, 0));
    });
  }

  Tensor acc = te::reduce_sum(
      "acc", out_shape, {{"rc", Cg}, {"rkd", k[0]}, {"rkh", k[1]}, {"rkw", k[2]}},
      [&](const std::vector<tir::Var> &i, const std::vector<tir::Var> &r) {
        Expr m = i[1];
        Expr c = group == 1 ? Expr(r[0]) : (m / static_cast<int>(Mg)) * static_cast<int>(Cg) + r[0];
        std::vector<Expr> xi = {i[0], c};
        for (int d = 0; d < 2; ++d) {
          xi.push_back(Expr(i[2 + d]) * static_cast<int>(st[d]) +
                       Expr(r[1 + d]) * static_cast<int>(dl[d]));
        }
        if (phases > 1) {  // column i*s + kw*dl = (i + (kw*dl)/s)*s + (kw*dl)%s
          Expr off = Expr(r[3]) * static_cast<int>(dl[2]);
          xi.push_back(off % static_cast<int>(phases));
          xi.push_back(Expr(i[4]) + off / static_cast<int>(phases));
        } else {
          xi.push_back(Expr(i[4]) + Expr(r[3]) * static_cast<int>(dl[2]));
        }
        Expr xe = (*xp)(xi);
        Expr we = (*wt)({m, r[0], r[1], r[2], r[3]});
        if (integer) {
          we = tir::cast(tir::int32(), we);
          if (wzp) {
            we = we - tir::cast(tir::int32(), wzp->shape()[0] == 1 ? (*wzp)({0}) : (*wzp)({m}));
          }
        }
        return xe * we;
      });

  Tensor out;
  DataType ot = kb.out_type();
  switch (node.op) {
    case OpKind::kConv: {
      Tensor bias = kb.has_input(2) ? kb.input(2) : nullptr;
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        Expr v = (*acc)({i[0], i[1], i[2], i[3], i[4]});
        return fused_activation(node, bias ? v + (*bias)({i[1]}) : v);
      });
      break;
    }
    case OpKind::kConvInteger:
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        return (*acc)({i[0], i[1], i[2], i[3], i[4]});
      });
      break;
    case OpKind::kQLinearConv: {
      // y = saturate(round_half_even(acc' * (sx * sw / sy)) + zy), in double as the reference.
      DataType f64 = DataType::float_(64);
      Tensor sx = kb.input(1, {1}), sw = kb.input(4), sy = kb.input(6, {1});
      Tensor zy = kb.has_input(7) ? kb.input(7, {1}) : nullptr;
      Tensor bias = kb.has_input(8) ? kb.input(8) : nullptr;
      bool per_channel = sw->shape()[0] > 1;
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        Expr v = (*acc)({i[0], i[1], i[2], i[3], i[4]});
        if (bias) v = v + (*bias)({i[1]});
        Expr swv = per_channel ? (*sw)({i[1]}) : (*sw)({0});
        Expr scale = tir::cast(f64, (*sx)({0})) * tir::cast(f64, swv) / tir::cast(f64, (*sy)({0}));
        Expr r = tir::Call::make(tir::CallOp::kRound, {tir::cast(f64, v) * scale});
        if (zy) r = r + tir::cast(f64, (*zy)({0}));
        r = tir::min(tir::max(r, tir::cast(f64, lowest(ot))), tir::cast(f64, highest(ot)));
        return tir::cast(ot, r);
      });
      break;
    }
    case OpKind::kQConv: {
      const QuantEpilogue requant(kb, M);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        return requant.apply((*acc)({i[0], i[1], i[2], i[3], i[4]}), i[1]);
      });
      break;
    }
    default:
      VACC_CHECK(false) << "build_conv";
  }
  Tensor result = out;
  if (blocked) {
    // Blocked with the output's blocks; the unit spatial dimensions of the 3-D view do not
    // change the bytes.
    const graph::Layout &l = kb.out_value().layout;
    result = block(out, l.block_n, l.block_c);
  }
  schedule::Schedule s({result});
  if (padded) schedule_elementwise(s, xp);
  int64_t lanes = native_lanes(acc_t);
  int64_t vt = o[2] <= 64 ? o[2] : divisor_at_most(o[2], 64);
  int64_t regs = (vt + lanes - 1) / lanes;
  schedule_reduction(s, acc, out, 1, 4, std::clamp<int64_t>(16 / regs, 1, 8), 64);
  if (blocked) schedule_elementwise(s, result);
  return kb.finish(s, result);
}

void add_conv_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kConv, build_conv});
  lowerings.push_back({graph::OpKind::kConvTranspose, build_conv});
  lowerings.push_back({graph::OpKind::kConvInteger, build_conv});
  lowerings.push_back({graph::OpKind::kQLinearConv, build_conv});
  lowerings.push_back({graph::OpKind::kQConv, build_conv});
}

}  // namespace vacc::ops::cpu
