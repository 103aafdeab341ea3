// Pooling: MaxPool (any dtype; the Indices output is not supported on the CPU backend),
// AveragePool (count_include_pad, ceil_mode) and GlobalAveragePool, on 1- to 3-D spatial
// shapes viewed as 3-D. MaxPool is a max over the window's positions written out (windows are
// small): without Indices as one vectorized expression over a copy padded with the lowest
// value, with Indices as a loop nest that tracks the winning position; AveragePool sums the valid
// positions and divides by their count (or by the count of positions inside the explicit padding),
// as the reference does. vacc.QAveragePool (int8, graph/qpool.h) is its integer sum times a
// multiplier per window, rounded, shifted and clipped.
#include "graph/window.h"
#include "ops/cpu/common.h"
#include "vacc/graph/qpool.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {

CpuKernel build_pool(const Node &node) {
  using graph::OpKind;
  if (auto blocked = build_blocked_pool(node)) return std::move(*blocked);
  KernelBuilder kb(node);
  const graph::Value &xv = kb.in_value(0);
  if (xv.rank() < 3 || xv.rank() > 5)
    kb.unsupported("a rank-" + std::to_string(xv.rank()) + " input");
  DataType t = tir_type(xv.dtype);
  if (node.op != OpKind::kMaxPool && !t.is_float()) kb.unsupported(a_type(t) + " input");
  int lead = 5 - xv.rank();
  Shape xs = {xv.shape[0], xv.shape[1]};
  for (int k = 0; k < lead; ++k) xs.push_back(1);
  xs.insert(xs.end(), xv.shape.begin() + 2, xv.shape.end());
  Shape out_shape = {xs[0], xs[1], 1, 1, 1};
  Tensor out;
  if (node.op == OpKind::kGlobalAveragePool) {
    Tensor x = kb.input(0, xs);
    int64_t count = xs[2] * xs[3] * xs[4];
    Tensor sum = te::reduce_sum("sum", out_shape, {{"rd", xs[2]}, {"rh", xs[3]}, {"rw", xs[4]}},
                                [&](const auto &i, const auto &r) {
                                  return (*x)({i[0], i[1], r[0], r[1], r[2]});
                                });
    out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
      return (*sum)({i[0], i[1], i[2], i[3], i[4]}) / fconst(t, static_cast<double>(count));
    });
    schedule::Schedule s({out});
    return kb.finish(s, out);
  }
  std::vector<int64_t> spatial(xv.shape.begin() + 2, xv.shape.end());
  graph::Window w = graph::make_window(node.attrs, spatial, node.attrs.get_ints("kernel_shape"),
                                       node.attrs.get_int("ceil_mode", 0) != 0);
  auto p3 = [&](const std::vector<int64_t> &v, int64_t fill) {
    std::vector<int64_t> r(3 - v.size(), fill);
    r.insert(r.end(), v.begin(), v.end());
    return r;
  };
  std::vector<int64_t> in = p3(w.in, 1), k = p3(w.kernel, 1), st = p3(w.stride, 1),
                       dl = p3(w.dilation, 1), pb = p3(w.pad_begin, 0), pe = p3(w.pad_end, 0),
                       o = p3(w.out, 1);
  out_shape = {xs[0], xs[1], o[0], o[1], o[2]};
  // pos(d) = o*s + k*dil - pad; `valid` within the input, `padded` within the explicit pads.
  auto position = [&](const std::vector<tir::Var> &i, int d, Expr kk) {
    return Expr(i[2 + d]) * static_cast<int>(st[d]) + kk * static_cast<int>(dl[d]) -
           static_cast<int>(pb[d]);
  };
  auto inside = [&](const std::vector<Expr> &pos, bool padded) {
    Expr c;
    for (int d = 0; d < 3; ++d) {
      Expr lo = padded ? Expr(-static_cast<int>(pb[d])) : Expr(0);
      Expr hi = padded ? Expr(static_cast<int>(in[d] + pe[d])) : Expr(static_cast<int>(in[d]));
      Expr cd = pos[d] >= lo && pos[d] < hi;
      c = c.defined() ? (c && cd) : cd;
    }
    return c;
  };
  const bool want_indices = node.outputs.size() > 1 && node.outputs[1];
  if (node.op == OpKind::kMaxPool && !want_indices && k[0] * k[1] * k[2] <= 64) {
    // Without Indices: the max over the window written out as one expression on a copy padded
    // with the type's lowest value (which a max never picks over a valid position), so the
    // output's rows vectorize. With a column stride s > 1 the copy's rows are split into s
    // phases ([.., s, ceil(W/s)], phase p holding columns p, p + s, ...): every term of the
    // max then reads contiguous vectors instead of gathers.
    Tensor x = kb.input(0, xs);
    std::vector<int64_t> need(3);
    const int64_t phases = st[2];
    bool padded = phases > 1;
    for (int d = 0; d < 3; ++d) {
      need[d] = (o[d] - 1) * st[d] + (k[d] - 1) * dl[d] + 1;
      padded |= pb[d] != 0 || need[d] > in[d];
    }
    Tensor xp = x;
    if (padded) {
      Shape ps = {xs[0], xs[1], need[0], need[1]};
      if (phases > 1) ps.push_back(phases);
      ps.push_back(phases > 1 ? (need[2] + phases - 1) / phases : need[2]);
      xp = te::compute("xpad", ps, [&](const std::vector<tir::Var> &i) {
        std::vector<Expr> pos, idx = {i[0], i[1]};
        for (int d = 0; d < 3; ++d) {
          Expr at = d < 2 || phases == 1 ? Expr(i[2 + d])
                                         : Expr(i[5]) * static_cast<int>(phases) + Expr(i[4]);
          pos.push_back(at - static_cast<int>(pb[d]));
          idx.push_back(pos.back());
        }
        return tir::select(inside(pos, false), (*x)(idx), lowest(t));
      });
    }
    out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
      Expr m;
      for (int64_t a = 0; a < k[0]; ++a)
        for (int64_t b = 0; b < k[1]; ++b)
          for (int64_t c = 0; c < k[2]; ++c) {
            std::vector<Expr> idx = {i[0], i[1]};
            const int64_t kk[3] = {a, b, c};
            for (int d = 0; d < 2; ++d)
              idx.push_back(Expr(i[2 + d]) * static_cast<int>(st[d]) +
                            static_cast<int>(kk[d] * dl[d]));
            const int64_t off = kk[2] * dl[2];  // column w*s + off = (w + off/s)*s + off%s
            if (phases > 1) {
              idx.push_back(static_cast<int>(off % phases));
              idx.push_back(Expr(i[4]) + static_cast<int>(off / phases));
            } else {
              idx.push_back(Expr(i[4]) + static_cast<int>(off));
            }
            Expr v = (*xp)(idx);
            m = m.defined() ? tir::max(m, v) : v;
          }
      return m;
    });
    schedule::Schedule s({out});
    if (padded) schedule_elementwise(s, xp);
    schedule_elementwise(s, out);
    return kb.finish(s, out);
  }
  if (node.op == OpKind::kMaxPool) {
    // A max-reduction has no te form: the loop nest is written directly, parallel over
    // channels. The first valid position wins ties, as in the reference; Indices count
    // elements of the whole input (row-major, or column-major spatially with storage_order=1).
    using namespace tir;
    bool col_major = node.attrs.get_int("storage_order", 0) != 0;
    Buffer xb = make_buffer("x", t, xs);
    Buffer yb = make_buffer("y", t, out_shape);
    Buffer ib = make_buffer("indices", tir::int64(), out_shape);
    Buffer best = make_buffer("best", t, {1}, Scope::kLocal);
    Buffer at = make_buffer("at", tir::int64(), {1}, Scope::kLocal);
    std::vector<Var> ov = {make_var("n"), make_var("c"), make_var("od"), make_var("oh"),
                           make_var("ow")};
    std::vector<Var> kv = {make_var("kd"), make_var("kh"), make_var("kw")};
    std::vector<Expr> pos;
    for (int d = 0; d < 3; ++d) pos.push_back(position(ov, d, kv[d]));
    auto i64 = [](Expr e) { return cast(tir::int64(), e); };
    Expr plane = i64(Expr(ov[0]) * static_cast<int>(xs[1]) + ov[1]);
    Expr spatial = col_major ? (i64(pos[2]) * xs[3] + i64(pos[1])) * xs[2] + i64(pos[0])
                             : (i64(pos[0]) * xs[3] + i64(pos[1])) * xs[4] + i64(pos[2]);
    Expr index = plane * (xs[2] * xs[3] * xs[4]) + spatial;
    Expr v = load(xb, {ov[0], ov[1], pos[0], pos[1], pos[2]});
    Stmt take = Seq::make({Store::make(best, {0}, v), Store::make(at, {0}, index)});
    Stmt update = IfThenElse::make(
        inside(pos, false),
        IfThenElse::make(load(at, {0}) < iconst(tir::int64(), 0) || v > load(best, {0}), take));
    for (int d = 2; d >= 0; --d) update = For::make(kv[d], k[d], ForKind::kSerial, update);
    std::vector<Expr> oi(ov.begin(), ov.end());
    std::vector<Stmt> row = {Store::make(best, {0}, lowest(t)),
                             Store::make(at, {0}, iconst(tir::int64(), -1)), update,
                             Store::make(yb, oi, load(best, {0}))};
    if (want_indices) row.push_back(Store::make(ib, oi, load(at, {0})));
    Stmt body = Allocate::make(best, Allocate::make(at, Seq::make(row)));
    for (int d = 4; d >= 0; --d) {
      ForKind kind = d == 1 && xs[1] > 1 ? ForKind::kParallel : ForKind::kSerial;
      body = For::make(ov[d], out_shape[d], kind, body);
    }
    CpuKernel kern;
    kern.func = Func{"MaxPool", {xb, yb}, body};
    if (want_indices) kern.func.params.push_back(ib);
    return kern;
  }
  Tensor x = kb.input(0, xs);
  bool include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
  std::vector<std::pair<std::string, int64_t>> raxes = {{"rd", k[0]}, {"rh", k[1]}, {"rw", k[2]}};
  Tensor sum = te::reduce_sum("sum", out_shape, raxes, [&](const auto &i, const auto &r) {
    std::vector<Expr> pos = {position(i, 0, r[0]), position(i, 1, r[1]), position(i, 2, r[2])};
    return tir::select(inside(pos, false), (*x)({i[0], i[1], pos[0], pos[1], pos[2]}),
                       fconst(t, 0));
  });
  Tensor count = te::reduce_sum("count", out_shape, raxes, [&](const auto &i, const auto &r) {
    std::vector<Expr> pos = {position(i, 0, r[0]), position(i, 1, r[1]), position(i, 2, r[2])};
    return tir::select(inside(pos, include_pad), fconst(t, 1), fconst(t, 0));
  });
  out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
    std::vector<Expr> idx(i.begin(), i.end());
    Expr c = (*count)(idx);
    return tir::select(c > fconst(t, 0), (*sum)(idx) / c, fconst(t, 0));
  });
  schedule::Schedule s({out});
  return kb.finish(s, out);
}

// vacc.QAveragePool (graph/qpool.h): the window's int32 sum over the valid positions times the
// window's multiplier M(n) (a host constant per output position), rounded, shifted, clipped.
CpuKernel build_qaverage_pool(const Node &node) {
  KernelBuilder kb(node);
  const graph::Value &xv = kb.in_value(0);
  if (xv.rank() != 4 || xv.layout.blocked) kb.unsupported("a blocked or non-2-D input");
  const Shape &xs = xv.shape;
  const graph::Window w =
      graph::make_window(node.attrs, {xs[2], xs[3]}, node.attrs.get_ints("kernel_shape"),
                         node.attrs.get_int("ceil_mode", 0) != 0);
  const int scale_bits = static_cast<int>(node.attrs.get_int("scale_bits"));
  const int64_t rshift = node.attrs.get_int("rshift");
  const int64_t lo = node.attrs.get_int("clip_min", -128), hi = node.attrs.get_int("clip_max", 127);
  const bool include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
  std::vector<int32_t> mult;
  for (int64_t oh = 0; oh < w.out[0]; ++oh)
    for (int64_t ow = 0; ow < w.out[1]; ++ow) {
      auto count = [&](int d, int64_t o) {
        const int64_t a = include_pad ? -w.pad_begin[d] : 0;
        const int64_t b = w.in[d] + (include_pad ? w.pad_end[d] : 0);
        return graph::qpool_axis_count(o, w.stride[d], w.kernel[d], w.pad_begin[d], a, b);
      };
      const int64_t n = count(0, oh) * count(1, ow);
      mult.push_back(static_cast<int32_t>(n ? graph::qpool_multiplier(n, scale_bits) : 0));
    }
  Tensor x = kb.input(0, xs);
  Tensor m = kb.constant_param("multipliers",
                               graph::Tensor::from_vector<int32_t>({w.out[0], w.out[1]}, mult));
  const DataType i32 = tir::int32();
  const Shape out_shape = {xs[0], xs[1], w.out[0], w.out[1]};
  Tensor sum = te::reduce_sum(
      "sum", out_shape, {{"rh", w.kernel[0]}, {"rw", w.kernel[1]}},
      [&](const auto &i, const auto &r) {
        Expr h =
            Expr(i[2]) * static_cast<int>(w.stride[0]) + r[0] - static_cast<int>(w.pad_begin[0]);
        Expr c =
            Expr(i[3]) * static_cast<int>(w.stride[1]) + r[1] - static_cast<int>(w.pad_begin[1]);
        Expr inside =
            h >= 0 && h < static_cast<int>(xs[2]) && c >= 0 && c < static_cast<int>(xs[3]);
        return tir::select(inside, tir::cast(i32, (*x)({i[0], i[1], h, c})), iconst(i32, 0));
      });
  Tensor out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
    Expr v = (*sum)({i[0], i[1], i[2], i[3]}) * (*m)({i[2], i[3]});
    v = (v + iconst(i32, int64_t{1} << (rshift - 1))) >> iconst(i32, rshift);
    return tir::cast(tir::int8(), tir::min(tir::max(v, iconst(i32, lo)), iconst(i32, hi)));
  });
  schedule::Schedule s({out});
  return kb.finish(s, out);
}

void add_pool_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kMaxPool, build_pool});
  lowerings.push_back({graph::OpKind::kAveragePool, build_pool});
  lowerings.push_back({graph::OpKind::kGlobalAveragePool, build_pool});
  lowerings.push_back({graph::OpKind::kQAveragePool, build_qaverage_pool});
}

}  // namespace vacc::ops::cpu
