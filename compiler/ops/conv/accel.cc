// conv2d on the accelerator (NCHWnc, any kernel, stride and padding, the padding done by the
// DMA; grouped and depthwise as slices of whole channel blocks, Conv2dParams::groups) with bias
// add, ReLU and shift-and-clip requantization fused on the ALU: what it supports, its default
// schedule and its compute definition (operators.h).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "lower/ops/divisors.h"
#include "lower/ops/modelled_time.h"
#include "lower/ops/requantize.h"
#include "lower/ops/schedule_rules.h"
#include "lower/ops/tile_output.h"
#include "ops/conv/accel_convolution.h"
#include "ops/elementwise/accel_arithmetic.h"
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

// Grouped with several output blocks per slice, an output block's first input block is
// (ob / (OB/groups)) * (CB/groups): tiles of one output block keep that division in the host
// loops, out of the micro-op loops (whose indices must be affine).
bool one_tile_oc_ok(const Conv2dParams &p, const isa::HwConfig &c) {
  return p.groups == 1 || p.out_channels / c.block_out == p.groups;
}

}  // namespace

void check_supported(const isa::HwConfig &c, const Conv2dParams &p, const std::string &name) {
  auto positive = [&](const char *what, int64_t v) {
    if (v <= 0) fail("{}: {} = {} must be positive", name, what, v);
  };
  positive("batch", p.batch);
  positive("in_channels", p.in_channels);
  positive("out_channels", p.out_channels);
  positive("height", p.height);
  positive("width", p.width);
  positive("kernel_h", p.kernel_h);
  positive("kernel_w", p.kernel_w);
  positive("stride_h", p.stride_h);
  positive("stride_w", p.stride_w);
  auto multiple = [&](const char *what, int64_t v, int64_t block, const char *key) {
    if (v % block != 0)
      fail("{}: {} = {} is not a multiple of {} = {}; pad the channels on the host", name, what, v,
           key, block);
  };
  multiple("batch", p.batch, c.batch, "gemm.batch");
  multiple("in_channels", p.in_channels, c.block_in, "gemm.block_in");
  multiple("out_channels", p.out_channels, c.block_out, "gemm.block_out");
  positive("groups", p.groups);
  if ((p.in_channels / c.block_in) % p.groups || (p.out_channels / c.block_out) % p.groups)
    fail(
        "{}: groups = {} must divide both the {} input and the {} output channel blocks; group "
        "whole blocks (support/block_groups.h)",
        name, p.groups, p.in_channels / c.block_in, p.out_channels / c.block_out);
  const int64_t max_pad = (int64_t{1} << isa::kPadBits) - 1;
  for (auto [what, v] : {std::pair{"pad_h", p.pad_h}, std::pair{"pad_w", p.pad_w}}) {
    if (v < 0) fail("{}: {} = {} must not be negative", name, what, v);
    if (v > max_pad)
      fail(
          "{}: {} = {} exceeds the DMA's padding limit of {} ({}-bit pad fields); pad the input "
          "on the host",
          name, what, v, max_pad, isa::kPadBits);
  }
  if (p.kernel_h > p.height + 2 * p.pad_h || p.kernel_w > p.width + 2 * p.pad_w)
    fail("{}: the {}x{} kernel is larger than the {}x{} padded input", name, p.kernel_h, p.kernel_w,
         p.height + 2 * p.pad_h, p.width + 2 * p.pad_w);
  check_requant_supported(c, p.requant, p.out_channels, name);
  if (p.residual) {
    if (c.block_in != c.block_out)
      fail(
          "{}: a fused residual add moves the skip tensor through the GEMM core with an identity "
          "weight, which needs gemm.block_in ({}) == gemm.block_out ({})",
          name, c.block_in, c.block_out);
    const Residual &r = *p.residual;
    check_add_arithmetic(c, r.lshift_out, r.lshift_skip, r.rshift, r.clip_min, r.clip_max, name);
  }
  if (p.pool) {
    const PoolEpilogue &q = *p.pool;
    if (p.residual) fail("{}: a fused max pool and a fused residual add in one convolution", name);
    for (auto [what, v] :
         {std::pair{"pool kernel_h", q.kernel_h}, std::pair{"pool kernel_w", q.kernel_w},
          std::pair{"pool stride_h", q.stride_h}, std::pair{"pool stride_w", q.stride_w}})
      if (v <= 0) fail("{}: {} = {} must be positive", name, what, v);
    if (q.kernel_h > p.out_height() || q.kernel_w > p.out_width())
      fail("{}: the {}x{} pool window is larger than the {}x{} convolution output", name,
           q.kernel_h, q.kernel_w, p.out_height(), p.out_width());
  }
}

namespace {

// default_schedule's search: the best tiling by the cost model, and its modelled cycles.
std::pair<AccelSchedule, double> best_schedule(const isa::HwConfig &c, const Conv2dParams &p,
                                               int vthreads, const std::string &name) {
  if (vthreads < 1 || vthreads > 2) fail("{}: vthreads = {} must be 1 or 2", name, vthreads);
  const int64_t OB = p.out_channels / c.block_out, CB = p.in_channels / c.block_in;
  // OH x OW: the operator's output (pooled with a fused pool), which the tiles split.
  const int64_t OH = p.result_height(), OW = p.result_width(), KH = p.kernel_h, KW = p.kernel_w;
  const int64_t NB = p.batch / c.batch;
  // Input blocks each output block reduces over (all of them unless grouped).
  const int64_t IBG = CB / p.groups;
  const int requested = vthreads;
  if (OB % vthreads != 0) vthreads = 1;  // too few output-channel blocks to split
  const double bw = c.mem_bytes_per_cycle;
  // A fused residual's ALU work per output tile: reset, shifts, the vector add, round, shift,
  // clip (and one GEMM).
  const double residual_alu = p.residual ? 1 + 1 + 2 + 2 + 2 + 1 : 0;
  // A fused pool's, per pooled output: zero, the first position's add, a max per other.
  const double pool_alu = p.pool ? 1 + 2 + 2.0 * (p.pool->kernel_h * p.pool->kernel_w - 1) : 0;
  // The convolution outputs a tile of th x tw results needs (the pool's windows overlap
  // between tiles: those rows and columns are computed by both).
  auto conv_rows = [&](int64_t th) {
    return p.pool ? (th - 1) * p.pool->stride_h + p.pool->kernel_h : th;
  };
  auto conv_cols = [&](int64_t tw) {
    return p.pool ? (tw - 1) * p.pool->stride_w + p.pool->kernel_w : tw;
  };

  // The best tiling with `V` threads splitting the channel blocks (rows = false) or the output
  // rows (rows = true), and its modelled cost.
  auto search = [&](int64_t V, bool rows) {
    AccelSchedule best;
    double best_cost = std::numeric_limits<double>::infinity();
    const int64_t acc_cap = c.acc_depth() / V, inp_cap = c.inp_depth() / V,
                  wgt_cap = c.wgt_depth() / V;
    // Channel blocks one thread covers.
    const int64_t thread_ob = rows ? OB : OB / V;
    for (int64_t th : divisors(OH)) {
      if (rows && (OH / th) % V != 0) continue;
      for (int64_t tw : divisors(OW)) {
        const int64_t ch = conv_rows(th), cw = conv_cols(tw);
        const int64_t ih = (ch - 1) * p.stride_h + KH, iw = (cw - 1) * p.stride_w + KW;
        for (int64_t toc : divisors(OB)) {
          if (!rows && (OB / toc) % V != 0) continue;
          // Grouped: one output block per tile. Tiles of several blocks (legal with one block
          // per slice) measured up to 1.7x slower on MobileNetV2's 576- and 960-channel
          // depthwise layers than their GEMM bound; one block per tile 1.07-1.1x.
          if (toc > 1 && p.groups > 1) continue;
          // Per thread: the accumulator tile, and bias and shifts for all its channel blocks
          // where they fit beside it, else for one block of toc. A fused residual adds its
          // skip tile beside the accumulators (ACC) and the input (INP), and one identity
          // weight tile.
          const int64_t per_channel = channel_vectors(p.requant);
          const int64_t acc_tiles =
              p.pool ? toc * (ch * cw + th * tw) : (p.residual ? 2 : 1) * toc * th * tw;
          const int64_t skip_tiles = p.residual ? toc * th * tw : 0, skip_wgt = p.residual ? 1 : 0;
          const bool bias_once = acc_tiles + per_channel * thread_ob <= acc_cap;
          if (!bias_once && acc_tiles + per_channel * toc > acc_cap) continue;
          for (int64_t tic : divisors(IBG)) {
            // Input blocks one load brings: grouped, a tile's output blocks read their own.
            const int64_t load_blocks =
                p.groups > 1 && OB == p.groups ? (toc - 1) * IBG + tic : tic;
            if (load_blocks * ih * iw + skip_tiles > inp_cap ||
                toc * tic * KH * KW + skip_wgt > wgt_cap)
              continue;
            const double S = double(OH / th) * double(OW / tw) * NB;
            const double OT = double(OB / toc), IT = double(IBG / tic);
            const double gemm = S * OB * IBG * KH * KW * ch * cw;
            // Per convolution output its reset (and requantization without a pool); per
            // result the pool's and the requantization's.
            const double alu =
                p.pool
                    ? S * OB *
                          (ch * cw + th * tw * (pool_alu + alu_cycles_per_tile(p.requant, c) - 1))
                    : double(NB) * OB * OH * OW *
                          (alu_cycles_per_tile(p.requant, c) + residual_alu);
            const double insns = S * OT * (IT * 3 + 9 + (p.residual ? 4 : 0));
            const double bytes =
                S * OT * IT * load_blocks * ih * iw * c.inp_tile_bytes() +
                S * OB * IBG * KH * KW * c.wgt_tile_bytes() + S * OB * c.acc_tile_bytes() +
                double(NB) * OB * OH * OW * c.out_tile_bytes() * (p.residual ? 2 : 1);
            // With two threads the ALU runs beside the other thread's GEMMs; what stays
            // exposed is the pipeline's fill (a step's first input tile and one block's
            // weights) and drain (the last tile's requantization).
            const double fill = double(load_blocks * ih * iw * c.inp_tile_bytes() +
                                       tic * KH * KW * c.wgt_tile_bytes()) /
                                bw;
            const double drain = double(toc * th * tw) *
                                 (alu_cycles_per_tile(p.requant, c) + residual_alu + pool_alu);
            const double compute = V > 1 ? std::max(gemm, alu) + fill + drain : gemm + alu;
            const double cost = modelled_time(compute + insns * kInsnOverheadCycles, bytes / bw,
                                              static_cast<int>(V));
            if (cost < best_cost) {
              best_cost = cost;
              best.tile_h = th;
              best.tile_w = tw;
              best.tile_oc = toc;
              best.tile_ic = tic;
              best.vthreads = static_cast<int>(V);
              best.bias_once = bias_once;
              best.vthread_rows = rows;
            }
          }
        }
      }
    }
    return std::make_pair(best, best_cost);
  };
  auto [best, best_cost] = search(vthreads, false);
  // Threads over the rows where the model expects that cheaper (they load the weights and
  // the input rows' halo twice instead of the whole input).
  if (requested > 1) {
    const auto [by_rows, rows_cost] = search(requested, true);
    if (rows_cost < best_cost) {
      best = by_rows;
      best_cost = rows_cost;
    }
    // One thread with the whole scratchpads where the model expects that cheaper: a thread's
    // halves can force tiles so small that every weight is loaded once per row (ResNet-18's
    // last layers at batch 2 on a narrow bus took twice the cycles).
    const auto [one, one_cost] = search(1, false);
    if (one_cost < best_cost) {
      best = one;
      best_cost = one_cost;
    }
  }
  const int64_t V = vthreads;
  const int64_t acc_cap = c.acc_depth() / V, inp_cap = c.inp_depth() / V,
                wgt_cap = c.wgt_depth() / V;
  if (best_cost == std::numeric_limits<double>::infinity()) {
    // Report the first scratchpad the smallest tile (1x1 output, one block each) overflows.
    const int64_t need_inp = KH * KW + (p.residual ? 1 : 0),
                  need_wgt = KH * KW + (p.residual ? 1 : 0),
                  need_acc = (p.residual ? 2 : 1) + channel_vectors(p.requant);
    auto report = [&](const char *pad, int64_t need, int64_t cap, int kib, const char *key) {
      fail(
          "{}: no tile fits: even one output pixel of one channel block needs {} {} tiles per "
          "virtual thread, but the {} scratchpad holds {} ({} KiB, {} = {}, {} virtual "
          "thread(s)); use a larger {} or a smaller kernel",
          name, need, pad, pad, cap, kib, key, kib, V, key);
    };
    if (need_wgt > wgt_cap) report("wgt", need_wgt, wgt_cap, c.wgt_kib, "buffers.wgt_kib");
    if (need_inp > inp_cap) report("inp", need_inp, inp_cap, c.inp_kib, "buffers.inp_kib");
    if (need_acc > acc_cap) report("acc", need_acc, acc_cap, c.acc_kib, "buffers.acc_kib");
    fail("{}: no tiling fits the scratchpads of config '{}'", name, c.name);
  }
  return {best, best_cost};
}

}  // namespace

AccelSchedule default_schedule(const isa::HwConfig &c, const Conv2dParams &p, int vthreads,
                               const std::string &name) {
  return best_schedule(c, p, vthreads, name).first;
}

double modelled_cycles(const isa::HwConfig &c, const Conv2dParams &p, int vthreads,
                       const std::string &name) {
  return best_schedule(c, p, vthreads, name).second;
}

ScheduleSpace schedule_space(const isa::HwConfig &c, const Conv2dParams &p) {
  const int64_t OB = p.out_channels / c.block_out, IBG = p.in_channels / c.block_in / p.groups;
  ScheduleSpace space;
  space.op = "conv2d";
  space.knobs = {
      {"tile_h", tile_sizes(p.result_height()),
       "output rows per tile: fewer tiles and instructions, less input halo reloaded; more "
       "INP and ACC per tile (a size that does not divide the rows ends in a tail tile)"},
      {"tile_w", tile_sizes(p.result_width()),
       "output columns per tile: as tile_h, along the rows"},
      {"tile_oc", tile_sizes(OB),
       "output channel blocks per tile: the input tile reused by more blocks (less input "
       "traffic); more WGT and ACC per tile"},
      {"tile_ic", tile_sizes(IBG),
       "input channel blocks per load: fewer, longer loads and GEMMs; more INP and WGT"},
      {"vthreads",
       {1, 2, 3, 4},
       "2 to 4: each thread's loads under the others' compute, each thread with 1/V of every "
       "scratchpad (smaller tiles)"},
      {"vthread_rows",
       {0, 1},
       "1: the threads split the output rows (each loads its rows' input and all weights) "
       "instead of the channel blocks (each loads the whole input and its weights)"},
      {"bias_once",
       {0, 1},
       "1: a thread's bias and shifts loaded once at its start, not per channel tile (no "
       "LOAD ACC between tiles, which drains the compute units); costs ACC entries"},
      {"resident", p.groups == 1 ? std::vector<int64_t>{0, 1, 2} : std::vector<int64_t>{0, 1},
       "the loop order: 0 channel tiles outside spatial tiles, both operands loaded per tile; "
       "1 the same, a channel tile's weights (all input blocks) loaded once for all its "
       "spatial tiles (less weight traffic, WGT holds them); 2 spatial tiles outside, a "
       "spatial tile's input (all input blocks) loaded once for all channel tiles (less input "
       "traffic, INP holds it; bias per tile unless bias_once)"},
  };
  return space;
}

std::optional<std::string> check_schedule(const isa::HwConfig &c, const Conv2dParams &p,
                                          const AccelSchedule &s) {
  const int64_t OB = p.out_channels / c.block_out, IBG = p.in_channels / c.block_in / p.groups;
  const int64_t OH = p.result_height(), OW = p.result_width();
  const int64_t V = s.vthreads;
  const int64_t th = s.tile_h, tw = s.tile_w, toc = s.tile_oc, tic = s.tile_ic;
  if (auto why = check_tile_sizes(
          {{"tile_h", th, OH}, {"tile_w", tw, OW}, {"tile_oc", toc, OB}, {"tile_ic", tic, IBG}}))
    return why;
  if (s.vthread_rows && V < 2) return std::string("vthread_rows needs 2 virtual threads");
  if (auto why = s.vthread_rows ? check_threads(V, tile_count(OH, th), "row")
                                : check_threads(V, tile_count(OB, toc), "channel"))
    return why;
  if (toc > 1 && !one_tile_oc_ok(p, c))
    return fmt::format("a grouped convolution with {} output blocks per group tiles one block",
                       OB / p.groups);
  using Resident = AccelSchedule::Resident;
  if (s.resident == Resident::kInputs && p.groups > 1)
    return std::string(
        "inputs resident (resident = 2) needs groups = 1: a grouped convolution's channel tiles "
        "read different inputs");
  // The capacities default_schedule's search checks.
  const int64_t ch = p.pool ? (th - 1) * p.pool->stride_h + p.pool->kernel_h : th;
  const int64_t cw = p.pool ? (tw - 1) * p.pool->stride_w + p.pool->kernel_w : tw;
  const int64_t ih = (ch - 1) * p.stride_h + p.kernel_h, iw = (cw - 1) * p.stride_w + p.kernel_w;
  // Tails: a thread's channel blocks, and a resident operand's input blocks, as tiles span them.
  const int64_t thread_ob = tiled_extent(OB, toc) / (s.vthread_rows ? 1 : V);
  const int64_t all_ib = tiled_extent(IBG, tic);
  const int64_t acc_tiles =
      p.pool ? toc * (ch * cw + th * tw) : (p.residual ? 2 : 1) * toc * th * tw;
  const int64_t load_blocks = p.groups > 1 && OB == p.groups ? (toc - 1) * IBG + tic : tic;
  if (auto why = check_fits(
          "ACC", acc_tiles + channel_vectors(p.requant) * (s.bias_once ? thread_ob : toc),
          c.acc_depth() / V))
    return why;
  const int64_t inp_blocks = s.resident == Resident::kInputs ? all_ib : load_blocks;
  if (auto why = check_fits("INP", inp_blocks * ih * iw + (p.residual ? toc * th * tw : 0),
                            c.inp_depth() / V))
    return why;
  const int64_t wgt_blocks = s.resident == Resident::kWeights ? all_ib : tic;
  return check_fits("WGT", toc * wgt_blocks * p.kernel_h * p.kernel_w + (p.residual ? 1 : 0),
                    c.wgt_depth() / V);
}

Operator define(const isa::HwConfig &c, const Conv2dParams &p, const AccelSchedule &sc,
                const std::string &name) {
  VACC_CHECK(p.batch % c.batch == 0 && p.in_channels % c.block_in == 0 &&
             p.out_channels % c.block_out == 0)
      << name << ": define() before check_supported()";
  int64_t NB = p.batch / c.batch, CB = p.in_channels / c.block_in,
          OB = p.out_channels / c.block_out;
  int64_t OH = p.out_height(), OW = p.out_width();
  VACC_CHECK(OH > 0 && OW > 0) << name << ": define() before check_supported()";
  VACC_CHECK(p.groups > 0 && CB % p.groups == 0 && OB % p.groups == 0)
      << name << ": define() before check_supported()";
  if (sc.tile_oc > 1 && !one_tile_oc_ok(p, c))
    fail(
        "{}: tile_oc = {}: a grouped convolution with {} output blocks per group tiles one output "
        "block at a time (tile_oc = 1)",
        name, sc.tile_oc, OB / p.groups);
  tir::DataType it = tir::DataType::int_(c.inp_bits), wt = tir::DataType::int_(c.wgt_bits),
                at = tir::DataType::int_(c.acc_bits);
  te::Tensor data = te::placeholder("data", {NB, CB, p.height, p.width, c.batch, c.block_in}, it);
  te::Tensor kernel = te::placeholder(
      "kernel", {OB, CB / p.groups, p.kernel_h, p.kernel_w, c.block_out, c.block_in}, wt);
  te::Tensor bias = te::placeholder("bias", {NB, OB, c.batch, c.block_out}, at);
  const Convolution cv = convolution(c, p, data, kernel);
  const te::Tensor pad = cv.pad, conv = cv.conv;
  // A fused max pool: each window's max of the accumulators (the requantization is monotone,
  // so it commutes with the max), zeroed, then the first position added, then a max per other
  // position, in place on the pooled tile.
  std::vector<te::Tensor> pool_alu;
  te::Tensor pooled = conv;
  if (p.pool) {
    const PoolEpilogue &q = *p.pool;
    const std::vector<int64_t> shape = {NB,      OB,         p.result_height(), p.result_width(),
                                        c.batch, c.block_out};
    const std::vector<std::string> names = {"n", "oc", "oh", "ow", "b", "oc_t"};
    auto k = [](int64_t v) { return tir::make_const(tir::int32(), v); };
    auto window = [&](const auto &v, int64_t kh, int64_t kw) {
      return (*conv)({v[0], v[1], Expr(v[2]) * k(q.stride_h) + k(kh),
                      Expr(v[3]) * k(q.stride_w) + k(kw), v[4], v[5]});
    };
    pooled = te::compute(
        "pool_zero", shape, [&](const auto &) { return tir::make_const(at, 0); }, names);
    pool_alu.push_back(pooled);
    for (int64_t kh = 0; kh < q.kernel_h; ++kh)
      for (int64_t kw = 0; kw < q.kernel_w; ++kw) {
        const te::Tensor prev = pooled;
        pooled = te::compute(
            fmt::format("pool_{}_{}", kh, kw), shape,
            [&, kh, kw](const auto &v) {
              Expr x = (*prev)(std::vector<Expr>(v.begin(), v.end()));
              return kh == 0 && kw == 0 ? x + window(v, kh, kw) : tir::max(x, window(v, kh, kw));
            },
            names);
        pool_alu.push_back(pooled);
      }
  }
  te::Tensor shifts = te::placeholder("shifts", {NB, OB, c.batch, c.block_out}, at);
  te::Tensor mults = te::placeholder("multipliers", {NB, OB, c.batch, c.block_out}, at);
  auto channel = [&](const te::Tensor &t) -> ChannelIndex {
    return [t](const auto &v) { return (*t)({v[0], v[1], v[4], v[5]}); };
  };
  auto stages = requantize(pooled, p.requant, c, channel(bias), channel(shifts), channel(mults));
  te::Tensor out = stages.back();
  // A fused residual add: the skip tile through the GEMM core, then the add's ALU stages.
  std::optional<ResidualStages> residual;
  if (p.residual) {
    residual = residual_stages(c, *p.residual, &stages, {NB, OB, OH, OW, c.batch, c.block_out});
    out = residual->out;
  }

  schedule::Schedule s({out});
  s[pad].compute_inline();
  te::Tensor data_l = s.cache_read(pad, Scope::kInp, {conv});
  te::Tensor kernel_l = s.cache_read(kernel, Scope::kWgt, {conv});
  te::Tensor bias_l = s.cache_read(bias, Scope::kAcc, {stages[0]});
  std::optional<te::Tensor> shifts_l;
  if (p.requant.per_channel()) shifts_l = s.cache_read(shifts, Scope::kAcc, {stages[1]});
  std::optional<te::Tensor> mults_l;
  if (p.requant.multiplied()) mults_l = s.cache_read(mults, Scope::kAcc, {stages[kMultiplyStage]});
  s[conv].set_scope(Scope::kAcc);
  for (size_t i = 0; i + 1 < stages.size(); ++i) s[stages[i]].set_scope(Scope::kAcc);

  auto &so = s[out];
  using Resident = AccelSchedule::Resident;
  const OutputTiling t = tile_blocked_output(s, out, sc);

  // The convolution: input-channel blocks outermost, the GEMM tile innermost.
  auto &sconv = s[conv];
  const te::IterVar ic_o = schedule_convolution(s, conv, so, t.tile, sc.tile_ic);
  // A resident operand's load covers all input blocks, outside the loop over the other's tiles.
  if (sc.resident == Resident::kInputs)
    s[data_l].compute_at(so, t.spatial);
  else
    s[data_l].compute_at(sconv, ic_o);
  if (sc.resident == Resident::kWeights)
    s[kernel_l].compute_at(so, t.channels);
  else
    s[kernel_l].compute_at(sconv, ic_o);
  s[data_l].pragma(s[data_l].axis()[0], "dma_copy");
  s[kernel_l].pragma(s[kernel_l].axis()[0], "dma_copy");
  // Bias and shifts depend on the output channels only: loaded once per thread or per channel
  // block, not per tile, so no LOAD ACC (which waits for both compute units) interrupts the
  // GEMM/ALU overlap inside a channel block.
  const te::IterVar per_channel_at = sc.bias_once ? t.thread : t.channels;
  s[bias_l].compute_at(so, per_channel_at);
  s[bias_l].pragma(s[bias_l].axis()[0], "dma_copy");
  for (const auto &vector : {shifts_l, mults_l}) {
    if (!vector) continue;
    s[*vector].compute_at(so, per_channel_at);
    s[*vector].pragma(s[*vector].axis()[0], "dma_copy");
  }
  for (const te::Tensor &stage : pool_alu) {
    s[stage].set_scope(Scope::kAcc);
    s[stage].compute_at(so, t.tile);
    s[stage].pragma(s[stage].axis()[0], "alu");
  }
  for (size_t i = 0; i + 1 < stages.size(); ++i) {
    s[stages[i]].compute_at(so, t.tile);
    s[stages[i]].pragma(s[stages[i]].axis()[0], "alu");
  }
  if (residual) schedule_residual(s, *residual, stages.back(), so, t.tile, per_channel_at);
  Operator op;
  op.args = {data, kernel, bias};
  if (p.requant.per_channel()) op.args.push_back(shifts);
  if (p.requant.multiplied()) op.args.push_back(mults);
  if (residual) op.args.insert(op.args.end(), {residual->skip, residual->skip_weight});
  op.args.push_back(out);
  op.func = schedule::to_loop_ir(s, name, op.args);
  return op;
}

}  // namespace vacc::lower
