// 2-D pooling on the accelerator (operators.h's PoolParams), both kinds through the GEMM core's
// identity weight, which brings int8 input tiles (the DMA's zeros where the window reaches
// padding) into the accumulators:
//   max      the padded input tile and each window's first position through the GEMM core,
//            then one ALU max per other window position, in place on the output tile;
//   average  the window's sum as a GEMM (one micro-op per window position), then
//            vacc.QAveragePool's multiply, rounding, shift and clip on the ALU
//            (graph/qpool.h), the multiplier an immediate, or an ACC tile per output
//            position where the windows' counts differ.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>

#include "lower/ops/clip.h"
#include "lower/ops/divisors.h"
#include "lower/ops/modelled_time.h"
#include "lower/ops/schedule_rules.h"
#include "lower/ops/tile_output.h"
#include "vacc/graph/qpool.h"
#include "vacc/isa/encoding.h"
#include "vacc/lower/operators.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/schedule/schedule.h"
#include "vacc/schedule/to_loop_ir.h"
#include "vacc/support/error.h"
#include "vacc/tir/ops.h"

namespace vacc::lower {
namespace {

using tir::Expr;
using tir::Scope;

// The ALU's immediate holds 2^14 at most: a rounding shift past 15 is split (see define).
constexpr int kMaxRoundShift = 15;

bool is_max(const PoolParams &p) {
  return p.kind == PoolParams::Kind::kMax;
}

// n of the window at (oh, ow): its positions inside the input, or inside the input and the
// explicit padding with count_include_pad (never ceil_mode's overhang).
int64_t count_of(const PoolParams &p, int64_t oh, int64_t ow) {
  const bool inc = p.count_include_pad;
  const int64_t nh =
      graph::qpool_axis_count(oh, p.stride_h, p.kernel_h, p.pad_top, inc ? -p.pad_top : 0,
                              p.height + (inc ? p.pad_bottom : 0));
  const int64_t nw =
      graph::qpool_axis_count(ow, p.stride_w, p.kernel_w, p.pad_left, inc ? -p.pad_left : 0,
                              p.width + (inc ? p.pad_right : 0));
  return nh * nw;
}

int64_t multiplier_of(const PoolParams &p, int64_t oh, int64_t ow) {
  const int64_t n = count_of(p, oh, ow);
  return n ? graph::qpool_multiplier(n, p.scale_bits) : 0;
}

// Rows (columns) of padding below (right of) the input that the windows read.
int64_t overhang_bottom(const PoolParams &p) {
  return std::max<int64_t>(0, p.padded_height() - p.pad_top - p.height);
}
int64_t overhang_right(const PoolParams &p) {
  return std::max<int64_t>(0, p.padded_width() - p.pad_left - p.width);
}

}  // namespace

bool pool_counts_vary(const PoolParams &p) {
  if (is_max(p)) return false;
  for (int64_t oh = 0; oh < p.out_height; ++oh)
    for (int64_t ow = 0; ow < p.out_width; ++ow)
      if (count_of(p, oh, ow) != count_of(p, 0, 0)) return true;
  return false;
}

std::vector<int64_t> pool_multipliers(const isa::HwConfig &c, const PoolParams &p) {
  std::vector<int64_t> m;
  m.reserve(p.out_height * p.out_width * c.batch * c.block_out);
  for (int64_t oh = 0; oh < p.out_height; ++oh)
    for (int64_t ow = 0; ow < p.out_width; ++ow)
      m.insert(m.end(), c.batch * c.block_out, multiplier_of(p, oh, ow));
  return m;
}

std::vector<int64_t> pool_weight(const isa::HwConfig &c) {
  std::vector<int64_t> w(c.block_out * c.block_in, 0);
  for (int64_t o = 0; o < std::min(c.block_out, c.block_in); ++o) w[o * c.block_in + o] = 1;
  return w;
}

void check_supported(const isa::HwConfig &c, const PoolParams &p, const std::string &name) {
  for (auto [what, v] :
       {std::pair{"batch", p.batch}, std::pair{"channels", p.channels},
        std::pair{"height", p.height}, std::pair{"width", p.width},
        std::pair{"kernel_h", p.kernel_h}, std::pair{"kernel_w", p.kernel_w},
        std::pair{"stride_h", p.stride_h}, std::pair{"stride_w", p.stride_w},
        std::pair{"out_height", p.out_height}, std::pair{"out_width", p.out_width}})
    if (v <= 0) fail("{}: {} = {} must be positive", name, what, v);
  if (c.block_in != c.block_out)
    fail(
        "{}: a pool moves int8 tiles into the accumulators through the GEMM core with an "
        "identity weight, which needs gemm.block_in ({}) == gemm.block_out ({})",
        name, c.block_in, c.block_out);
  for (auto [what, v, block, key] :
       {std::tuple{"batch", p.batch, c.batch, "gemm.batch"},
        std::tuple{"channels", p.channels, c.block_out, "gemm.block_out"}})
    if (v % block != 0)
      fail("{}: {} = {} is not a multiple of {} = {}; pad it on the host", name, what, v, key,
           block);
  const int64_t max_pad = (int64_t{1} << isa::kPadBits) - 1;
  for (auto [what, v] :
       {std::pair{"padding above", p.pad_top}, std::pair{"padding left", p.pad_left},
        std::pair{"padding below", overhang_bottom(p)},
        std::pair{"padding right", overhang_right(p)}}) {
    if (v < 0) fail("{}: {} = {} must not be negative", name, what, v);
    if (v > max_pad)
      fail("{}: {} = {} exceeds the DMA's padding limit of {} ({}-bit pad fields)", name, what, v,
           max_pad, isa::kPadBits);
  }
  if (p.pad_bottom < 0 || p.pad_right < 0)
    fail("{}: the explicit padding must not be negative", name);
  if ((p.out_height - 1) * p.stride_h >= p.pad_top + p.height ||
      (p.out_width - 1) * p.stride_w >= p.pad_left + p.width)
    fail("{}: the last {}x{} output's window starts past the input and its padding", name,
         p.out_height, p.out_width);
  if (is_max(p)) {
    if (p.padded() && !p.input_nonnegative)
      fail(
          "{}: a padded max pool reads the DMA's zero padding, which never wins a window's max "
          "only when no input is negative; its input is not clipped at 0",
          name);
    return;
  }
  if (p.scale_bits < 0 || p.scale_bits > graph::kQPoolMaxScaleBits)
    fail("{}: scale_bits = {} must lie in [0, {}]", name, p.scale_bits, graph::kQPoolMaxScaleBits);
  if (p.rshift < 1 || p.rshift > 30) fail("{}: rshift = {} must lie in [1, 30]", name, p.rshift);
  if (p.clip_min < -128 || p.clip_max > 127 || p.clip_min > p.clip_max)
    fail("{}: clip bounds [{}, {}] must be an int8 range", name, p.clip_min, p.clip_max);
  for (int64_t oh = 0; oh < p.out_height; ++oh)
    for (int64_t ow = 0; ow < p.out_width; ++ow)
      if (multiplier_of(p, oh, ow) > graph::kQPoolMaxMultiplier)
        fail("{}: the multiplier {} of output ({}, {}) does not fit the ALU's 16-bit immediate",
             name, multiplier_of(p, oh, ow), oh, ow);
}

ScheduleSpace schedule_space(const isa::HwConfig &c, const PoolParams &p) {
  ScheduleSpace space;
  space.op = "pool2d";
  space.base.tile_ic = 1;
  space.knobs = {
      {"tile_h", tile_sizes(p.out_height),
       "output rows per tile: fewer tiles, less window overlap reloaded; more INP and ACC"},
      {"tile_w", tile_sizes(p.out_width), "output columns per tile: as tile_h"},
      {"tile_oc", tile_sizes(p.channels / c.block_out),
       "channel blocks per tile: fewer, longer loads; more INP and ACC"},
      {"vthreads",
       {1, 2},
       "2: one thread's loads under the other's compute, each with half of every scratchpad"},
  };
  return space;
}

std::optional<std::string> check_schedule(const isa::HwConfig &c, const PoolParams &p,
                                          const AccelSchedule &s) {
  const int64_t CB = p.channels / c.block_out, V = s.vthreads;
  const int64_t th = s.tile_h, tw = s.tile_w, toc = s.tile_oc;
  if (s.tile_ic != 1 || s.vthread_rows || s.bias_once ||
      s.resident != AccelSchedule::Resident::kNone)
    return std::string(
        "a pool tiles channels, rows and columns: tile_ic = 1, no vthread_rows, "
        "bias_once or resident operand");
  if (auto why = check_tile_sizes(
          {{"tile_h", th, p.out_height}, {"tile_w", tw, p.out_width}, {"tile_oc", toc, CB}}))
    return why;
  if (auto why = check_threads(V, tile_count(CB, toc), "channel")) return why;
  const int64_t ih = (th - 1) * p.stride_h + p.kernel_h, iw = (tw - 1) * p.stride_w + p.kernel_w;
  const int64_t acc =
      is_max(p) ? toc * (ih * iw + th * tw) : toc * th * tw + (pool_counts_vary(p) ? th * tw : 0);
  if (auto why = check_fits("INP", toc * ih * iw, c.inp_depth() / V)) return why;
  return check_fits("ACC", acc, c.acc_depth() / V);
}

AccelSchedule default_schedule(const isa::HwConfig &c, const PoolParams &p, int vthreads,
                               const std::string &name) {
  if (vthreads < 1 || vthreads > 2) fail("{}: vthreads = {} must be 1 or 2", name, vthreads);
  const int64_t CB = p.channels / c.block_out, NB = p.batch / c.batch;
  const int64_t OH = p.out_height, OW = p.out_width, KH = p.kernel_h, KW = p.kernel_w;
  if (CB % vthreads != 0) vthreads = 1;
  const int64_t V = vthreads;
  const int64_t acc_cap = c.acc_depth() / V, inp_cap = c.inp_depth() / V;
  const bool vary = pool_counts_vary(p);
  const double window = double(KH * KW);
  AccelSchedule best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (int64_t th : divisors(OH))
    for (int64_t tw : divisors(OW)) {
      const int64_t ih = (th - 1) * p.stride_h + KH, iw = (tw - 1) * p.stride_w + KW;
      for (int64_t toc : divisors(CB)) {
        if ((CB / toc) % V != 0) continue;
        const int64_t acc =
            is_max(p) ? toc * (ih * iw + th * tw) : toc * th * tw + (vary ? th * tw : 0);
        if (toc * ih * iw > inp_cap || acc > acc_cap) continue;
        const double tiles = double(OH / th) * double(OW / tw) * double(CB / toc) * double(NB);
        const double out = double(toc * th * tw);
        const double gemm = tiles * (is_max(p) ? double(toc * ih * iw) + out : out * window);
        // Vector ALU operations issue every second cycle, immediates every cycle.
        const double alu = tiles * out * (is_max(p) ? 2 * (window - 1) : 6 + (vary ? 1 : 0));
        const double insns = tiles * (8 + (is_max(p) ? window : 6));
        const double bytes =
            tiles * (double(toc * ih * iw * c.inp_tile_bytes()) + out * c.out_tile_bytes() +
                     (vary ? double(th * tw * c.acc_tile_bytes()) : 0));
        const double compute =
            (V > 1 ? std::max(gemm, alu) : gemm + alu) + insns * kInsnOverheadCycles;
        const double memory = bytes / c.mem_bytes_per_cycle;
        const double cost =
            V > 1 ? std::max(compute, memory) + 0.05 * std::min(compute, memory) : compute + memory;
        if (cost < best_cost) {
          best_cost = cost;
          best = AccelSchedule{th, tw, toc, 1, static_cast<int>(V)};
        }
      }
    }
  if (best_cost == std::numeric_limits<double>::infinity())
    fail(
        "{}: no tile fits: one output of one channel block needs {} inp tiles (its window) and "
        "{} acc tiles per virtual thread, but the scratchpads hold {} and {} ({} virtual "
        "thread(s)); use a larger buffers.inp_kib / buffers.acc_kib",
        name, KH * KW, is_max(p) ? KH * KW + 1 : 1 + (vary ? 1 : 0), inp_cap, acc_cap, V);
  return best;
}

Operator define(const isa::HwConfig &c, const PoolParams &p, const AccelSchedule &sc,
                const std::string &name) {
  VACC_CHECK(c.block_in == c.block_out && p.channels % c.block_out == 0 && p.batch % c.batch == 0)
      << name << ": define() before check_supported()";
  const int64_t NB = p.batch / c.batch, CB = p.channels / c.block_out;
  const int64_t OH = p.out_height, OW = p.out_width, PH = p.padded_height(), PW = p.padded_width();
  const tir::DataType it = tir::DataType::int_(c.inp_bits), wt = tir::DataType::int_(c.wgt_bits),
                      at = tir::DataType::int_(c.acc_bits);
  const std::vector<std::string> names = {"n", "c", "h", "w", "b", "o"};
  const std::vector<int64_t> out_shape = {NB, CB, OH, OW, c.batch, c.block_out};
  auto k = [](int64_t v) { return tir::make_const(tir::int32(), v); };
  auto idx = [](const std::vector<tir::Var> &v) { return std::vector<Expr>(v.begin(), v.end()); };

  te::Tensor data = te::placeholder("data", {NB, CB, p.height, p.width, c.batch, c.block_in}, it);
  te::Tensor weight = te::placeholder("weight", {1, c.block_out, c.block_in}, wt);
  te::Tensor pad = te::compute(
      "pad", {NB, CB, PH, PW, c.batch, c.block_in},
      [&](const auto &v) {
        Expr h = v[2], w = v[3];
        Expr inside = h >= k(p.pad_top) && h < k(p.height + p.pad_top) && w >= k(p.pad_left) &&
                      w < k(p.width + p.pad_left);
        return tir::select(inside,
                           (*data)({v[0], v[1], h - k(p.pad_top), w - k(p.pad_left), v[4], v[5]}),
                           tir::make_const(it, 0));
      },
      {"n", "c", "h", "w", "b", "ci"});
  // pad[n, c, h, w, b, :] through the identity weight: acc[.., o] = pad[.., o].
  auto through_gemm = [&](const std::string &tname, const std::vector<int64_t> &shape, int64_t sh,
                          int64_t sw) {
    return te::reduce_sum(
        tname, shape, {{"one", 1}, {"ci", c.block_in}},
        [&, sh, sw](const auto &v, const auto &r) {
          return tir::cast(
                     at, (*pad)({v[0], v[1], Expr(v[2]) * k(sh), Expr(v[3]) * k(sw), v[4], r[1]})) *
                 tir::cast(at, (*weight)({r[0], v[5], r[1]}));
        },
        names);
  };

  std::vector<te::Tensor> gemms, alu;  // GEMM stages (their INP reads) and ALU stages, in order
  std::optional<te::Tensor> mults;
  te::Tensor last;
  if (is_max(p)) {
    // The padded input tile and each window's first position in ACC; then a max per position.
    te::Tensor acc_in = through_gemm("acc_in", {NB, CB, PH, PW, c.batch, c.block_out}, 1, 1);
    last = through_gemm("first", out_shape, p.stride_h, p.stride_w);
    gemms = {acc_in, last};
    for (int64_t kh = 0; kh < p.kernel_h; ++kh)
      for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
        if (kh == 0 && kw == 0) continue;
        const te::Tensor prev = last;
        last = te::compute(
            fmt::format("max_{}_{}", kh, kw), out_shape,
            [&, kh, kw](const auto &v) {
              return tir::max((*prev)(idx(v)),
                              (*acc_in)({v[0], v[1], Expr(v[2]) * k(p.stride_h) + k(kh),
                                         Expr(v[3]) * k(p.stride_w) + k(kw), v[4], v[5]}));
            },
            names);
        alu.push_back(last);
      }
  } else {
    // The window's sum: the GEMM core accumulates the identity weight over its positions.
    last = te::reduce_sum(
        "sum", out_shape, {{"kh", p.kernel_h}, {"kw", p.kernel_w}, {"ci", c.block_in}},
        [&](const auto &v, const auto &r) {
          return tir::cast(at, (*pad)({v[0], v[1], Expr(v[2]) * k(p.stride_h) + r[0],
                                       Expr(v[3]) * k(p.stride_w) + r[1], v[4], r[2]})) *
                 tir::cast(at, (*weight)({k(0), v[5], r[2]}));
        },
        names);
    gemms = {last};
    auto stage = [&](const char *sname,
                     const std::function<Expr(Expr, const std::vector<tir::Var> &)> &f) {
      const te::Tensor prev = last;
      last = te::compute(
          sname, out_shape, [&](const auto &v) { return f((*prev)(idx(v)), v); }, names);
      alu.push_back(last);
    };
    auto imm = [&](int64_t v) { return tir::make_const(at, v); };
    if (pool_counts_vary(p)) {
      mults = te::placeholder("multipliers", {OH, OW, c.batch, c.block_out}, at);
      stage("scale", [&](Expr x, const auto &v) {
        return x * (**mults)({v[2], v[3], v[4], v[5]});
      });
    } else {
      const int64_t m = multiplier_of(p, 0, 0);
      stage("scale", [&](Expr x, const auto &) { return x * imm(m); });
    }
    // (t + 2^(r-1)) >> r, as ((t >> (r-15)) + 2^14) >> 15 past 15 (the same value: the low
    // bits dropped first cannot carry into bit r once 2^14 is added).
    int r = p.rshift;
    if (r > kMaxRoundShift) {
      const int pre = r - kMaxRoundShift;
      stage("pre_shift", [&](Expr x, const auto &) { return x >> imm(pre); });
      r = kMaxRoundShift;
    }
    stage("round", [&](Expr x, const auto &) { return x + imm(int64_t{1} << (r - 1)); });
    stage("shift", [&](Expr x, const auto &) { return x >> imm(r); });
    for (const ClipStep &step : clip_steps(c, p.clip_min, p.clip_max, at))
      stage(step.name.c_str(), [&](Expr x, const auto &) { return step.value(x); });
  }
  const te::Tensor final_acc = last;
  te::Tensor out = te::compute(
      "out", out_shape, [&](const auto &v) { return tir::cast(it, (*final_acc)(idx(v))); }, names);

  schedule::Schedule s({out});
  s[pad].compute_inline();
  te::Tensor data_l = s.cache_read(pad, Scope::kInp, gemms);
  te::Tensor weight_l = s.cache_read(weight, Scope::kWgt, gemms);
  std::optional<te::Tensor> mults_l;
  if (mults) mults_l = s.cache_read(*mults, Scope::kAcc, {alu[0]});
  auto &so = s[out];
  const OutputTiling t = tile_blocked_output(s, out, sc);
  s[weight_l].compute_at(so, t.thread);
  s[weight_l].pragma(s[weight_l].axis()[0], "dma_copy");
  s[data_l].compute_at(so, t.tile);
  s[data_l].pragma(s[data_l].axis()[0], "dma_copy");
  if (mults_l) {
    s[*mults_l].compute_at(so, t.tile);
    s[*mults_l].pragma(s[*mults_l].axis()[0], "dma_copy");
  }
  for (const te::Tensor &g : gemms) {
    auto &st = s[g];
    st.set_scope(Scope::kAcc);
    st.compute_at(so, t.tile);
    auto x = st.axis();
    auto r = st.reduce_axis();
    // Window positions (or the unit axis) outside the tile, the block_in lanes innermost.
    std::vector<te::IterVar> order = {x[0]};
    order.insert(order.end(), r.begin(), r.end() - 1);
    order.insert(order.end(), {x[1], x[2], x[3], x[4], x[5], r.back()});
    st.reorder(order);
    st.tensorize(x[4], "gemm");
  }
  for (const te::Tensor &a : alu) {
    s[a].set_scope(Scope::kAcc);
    s[a].compute_at(so, t.tile);
    s[a].pragma(s[a].axis()[0], "alu");
  }
  Operator op;
  op.args = {data, weight};
  if (mults) op.args.push_back(*mults);
  op.args.push_back(out);
  op.func = schedule::to_loop_ir(s, name, op.args);
  return op;
}

}  // namespace vacc::lower
