// Two convolutions run depth first on the accelerator (ConvChainParams, operators.h): per tile
// of output pixels, the first convolution's result for all its channels is requantized in ACC,
// narrowed into INP by STORE INP and read there by the second (1x1) convolution's GEMMs, so the
// intermediate never goes to DRAM. What it supports, its default schedule, its schedule space
// and its compute definition.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "lower/ops/divisors.h"
#include "lower/ops/modelled_time.h"
#include "lower/ops/requantize.h"
#include "lower/ops/schedule_rules.h"
#include "lower/ops/tile_output.h"
#include "ops/conv/accel_convolution.h"
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

// Scratchpad tiles one virtual thread of a chain's schedule needs.
struct ChainNeeds {
  int64_t inp = 0, wgt = 0, acc = 0;
};

ChainNeeds chain_needs(const isa::HwConfig &c, const ConvChainParams &p, const AccelSchedule &s) {
  const Conv2dParams &a = p.first;
  const int64_t MB = a.out_channels / c.block_out, IBG = a.in_channels / c.block_in / a.groups;
  const int64_t th = s.tile_h, tw = s.tile_w;
  const int64_t ih = (th - 1) * a.stride_h + a.kernel_h, iw = (tw - 1) * a.stride_w + a.kernel_w;
  // Grouped, a tile's output blocks read their own input blocks.
  const int64_t load_blocks = a.groups > 1 ? (s.mid_oc - 1) * IBG + s.tile_ic : s.tile_ic;
  const int64_t OB = p.second.out_channels / c.block_out;
  const bool weights = s.resident == AccelSchedule::Resident::kWeights;
  // A residual add on the second: its skip tile in INP and in ACC, its identity weight.
  const int64_t skip_tiles = p.second.residual ? s.tile_oc * th * tw : 0;
  ChainNeeds n;
  // The first's input tile, the kept result, the skip tile.
  n.inp = load_blocks * ih * iw + MB * th * tw + skip_tiles;
  // Both convolutions' weights, all of them (resident) or one tile's of each.
  n.wgt = (weights ? MB * IBG * a.kernel_h * a.kernel_w + OB * MB
                   : s.mid_oc * s.tile_ic * a.kernel_h * a.kernel_w + s.tile_oc * s.mid_ic) +
          (p.second.residual ? 1 : 0);
  n.acc = (s.mid_oc + s.tile_oc) * th * tw + skip_tiles +
          channel_vectors(a.requant) * (s.bias_once ? MB : s.mid_oc) +
          channel_vectors(p.second.requant) * (s.bias_once ? OB : s.tile_oc);
  return n;
}

// The model's cycles for schedule `s` (default_schedule's search).
double chain_cost(const isa::HwConfig &c, const ConvChainParams &p, const AccelSchedule &s) {
  const Conv2dParams &a = p.first, &b = p.second;
  const double MB = double(a.out_channels / c.block_out), OB = double(b.out_channels / c.block_out);
  const double IBG = double(a.in_channels / c.block_in / a.groups);
  const double NB = double(a.batch / c.batch), OH = double(a.out_height()),
               OW = double(a.out_width());
  const double th = double(s.tile_h), tw = double(s.tile_w);
  const double ih = (th - 1) * a.stride_h + a.kernel_h, iw = (tw - 1) * a.stride_w + a.kernel_w;
  const double KK = double(a.kernel_h * a.kernel_w);
  const double load_blocks = a.groups > 1 ? (s.mid_oc - 1) * IBG + s.tile_ic : s.tile_ic;
  const double S = NB * (OH / th) * (OW / tw);
  const double M_T = MB / s.mid_oc, I_T = IBG / s.tile_ic, O_T = OB / s.tile_oc,
               J_T = MB / s.mid_ic;
  const double gemm = S * th * tw * (MB * IBG * KK + OB * MB);
  // A residual add's ALU work per output tile: reset, shifts, the vector add, round, shift,
  // clip (as conv2d's model counts it).
  const double residual_alu = b.residual ? 1 + 1 + 2 + 2 + 2 + 1 : 0;
  const double alu = NB * OH * OW *
                     (MB * alu_cycles_per_tile(a.requant, c) +
                      OB * (alu_cycles_per_tile(b.requant, c) + residual_alu));
  // Per spatial tile: each first block tile's loads and GEMMs per input block, its bias, ALU
  // and STORE INP; each second block tile's weight loads and GEMMs per group, bias, ALU, store.
  const int V = s.vthreads;
  const bool weights = s.resident == AccelSchedule::Resident::kWeights;
  // Resident weights and bias load once per thread (and batch block), else per spatial tile.
  const double weight_loads = weights ? NB * V : S, bias_loads = s.bias_once ? NB * V : S;
  const double insns = S * (M_T * (I_T * (weights ? 2 : 3) + (s.bias_once ? 8 : 9)) +
                            O_T * (J_T * (weights ? 1 : 2) + (s.bias_once ? 8 : 9)));
  const double bytes = S * M_T * I_T * load_blocks * ih * iw * c.inp_tile_bytes() +
                       weight_loads * (MB * IBG * KK + OB * MB) * c.wgt_tile_bytes() +
                       bias_loads * (MB + OB) * c.acc_tile_bytes() +
                       NB * OB * OH * OW * c.out_tile_bytes() * (b.residual ? 2 : 1);
  const double bw = c.mem_bytes_per_cycle;
  const double fill =
      (load_blocks * ih * iw * c.inp_tile_bytes() + s.tile_ic * KK * c.wgt_tile_bytes()) / bw;
  const double drain = s.tile_oc * th * tw * (alu_cycles_per_tile(b.requant, c) + residual_alu);
  const double compute = V > 1 ? std::max(gemm, alu) + fill + drain : gemm + alu;
  return modelled_time(compute + insns * kInsnOverheadCycles, bytes / bw, V);
}

}  // namespace

void check_supported(const isa::HwConfig &c, const ConvChainParams &p, const std::string &name) {
  const Conv2dParams &a = p.first, &b = p.second;
  check_supported(c, a, name + " (first)");
  check_supported(c, b, name + " (second)");
  if (!c.store_inp)
    fail(
        "{}: a conv chain keeps the first convolution's result on chip with STORE INP; set "
        "extensions.store_inp: true in the config",
        name);
  if (a.pool || a.residual)
    fail("{}: the first convolution of a chain has a fused {}; only the second may end the chain",
         name, a.pool ? "max pool" : "residual add");
  if (b.pool)
    fail("{}: the second convolution of a chain with a fused max pool is not supported", name);
  if (b.kernel_h != 1 || b.kernel_w != 1 || b.stride_h != 1 || b.stride_w != 1 || b.pad_h != 0 ||
      b.pad_w != 0 || b.groups != 1)
    fail(
        "{}: the second convolution of a chain is a 1x1 convolution (stride 1, no padding, "
        "groups 1); it is {}x{} stride {}x{} pad {}x{} groups {}",
        name, b.kernel_h, b.kernel_w, b.stride_h, b.stride_w, b.pad_h, b.pad_w, b.groups);
  if (b.batch != a.batch || b.in_channels != a.out_channels || b.height != a.out_height() ||
      b.width != a.out_width())
    fail(
        "{}: the second convolution reads {}x{}x{}x{} but the first makes {}x{}x{}x{} (batch x "
        "channels x height x width)",
        name, b.batch, b.in_channels, b.height, b.width, a.batch, a.out_channels, a.out_height(),
        a.out_width());
}

ScheduleSpace schedule_space(const isa::HwConfig &c, const ConvChainParams &p) {
  const Conv2dParams &a = p.first;
  const int64_t MB = a.out_channels / c.block_out, OB = p.second.out_channels / c.block_out;
  const int64_t IBG = a.in_channels / c.block_in / a.groups;
  ScheduleSpace space;
  space.op = "conv_chain";
  space.base.vthread_rows = true;
  space.knobs = {
      {"tile_h", divisors(a.out_height()),
       "output rows per tile: fewer tiles and instructions, less input halo reloaded; more INP "
       "for the kept result and more ACC per tile"},
      {"tile_w", divisors(a.out_width()), "output columns per tile: as tile_h, along the rows"},
      {"tile_oc", divisors(OB),
       "the second convolution's output blocks per tile: longer GEMMs over the kept result; "
       "more WGT and ACC"},
      {"tile_ic", divisors(IBG),
       "the first convolution's input blocks per load: fewer, longer loads and GEMMs; more INP "
       "and WGT"},
      {"mid_oc", divisors(MB),
       "the first convolution's output blocks per accumulator tile, stored into INP at once: "
       "fewer STORE INPs and loads of the input; more ACC and WGT"},
      {"mid_ic", divisors(MB),
       "the kept result's blocks per GEMM group of the second convolution: fewer, longer "
       "weight loads and GEMMs; more WGT"},
      {"vthreads",
       {1, 2, 3, 4},
       "2 to 4: threads over the output rows, one's loads and GEMMs under the others' "
       "(each thread with 1/V of every scratchpad and its own kept result)"},
      {"resident",
       {2, 1},
       "2: each spatial tile loads the weights its GEMMs read; 1: both convolutions' weights "
       "loaded once per thread and kept in WGT for all spatial tiles (the spatial tiles are "
       "outermost either way)"},
      {"bias_once",
       {0, 1},
       "1: both convolutions' bias (and shifts) loaded once per thread instead of per tile; "
       "costs ACC entries"},
  };
  return space;
}

std::optional<std::string> check_schedule(const isa::HwConfig &c, const ConvChainParams &p,
                                          const AccelSchedule &s) {
  const Conv2dParams &a = p.first;
  const int64_t MB = a.out_channels / c.block_out, OB = p.second.out_channels / c.block_out;
  const int64_t IBG = a.in_channels / c.block_in / a.groups;
  const int64_t OH = a.out_height(), OW = a.out_width();
  if (auto why = check_tile_sizes({{"tile_h", s.tile_h, OH},
                                   {"tile_w", s.tile_w, OW},
                                   {"tile_oc", s.tile_oc, OB},
                                   {"tile_ic", s.tile_ic, IBG},
                                   {"mid_oc", s.mid_oc, MB},
                                   {"mid_ic", s.mid_ic, MB}}))
    return why;
  // The kept result is whole tiles: a tail would compute the first convolution past its grid.
  for (auto [what, v, extent] :
       {std::tuple{"tile_h", s.tile_h, OH}, std::tuple{"tile_w", s.tile_w, OW},
        std::tuple{"tile_oc", s.tile_oc, OB}, std::tuple{"tile_ic", s.tile_ic, IBG},
        std::tuple{"mid_oc", s.mid_oc, MB}, std::tuple{"mid_ic", s.mid_ic, MB}})
    if (extent % v)
      return fmt::format("{} = {} must divide its extent {} in a conv chain", what, v, extent);
  if (a.groups > 1 && s.mid_oc > 1 && MB != a.groups)
    return fmt::format(
        "a grouped first convolution with {} output blocks per group tiles one "
        "block (mid_oc = 1)",
        MB / a.groups);
  if (!s.vthread_rows)
    return std::string("a conv chain's virtual threads split the output rows (vthread_rows = 1)");
  if (auto why = check_threads(s.vthreads, tile_count(OH, s.tile_h), "row")) return why;
  if (s.resident == AccelSchedule::Resident::kNone)
    return std::string(
        "a conv chain's spatial tiles are outermost (resident = 2: weights per tile, or 1: "
        "weights once per thread)");
  const ChainNeeds n = chain_needs(c, p, s);
  const int64_t V = s.vthreads;
  if (auto why = check_fits("ACC", n.acc, c.acc_depth() / V)) return why;
  if (auto why = check_fits("INP", n.inp, c.inp_depth() / V)) return why;
  return check_fits("WGT", n.wgt, c.wgt_depth() / V);
}

namespace {

std::pair<AccelSchedule, double> best_schedule(const isa::HwConfig &c, const ConvChainParams &p,
                                               int vthreads, const std::string &name) {
  if (vthreads < 1 || vthreads > 2) fail("{}: vthreads = {} must be 1 or 2", name, vthreads);
  const ScheduleSpace space = schedule_space(c, p);
  AccelSchedule best;
  double best_cost = std::numeric_limits<double>::infinity();
  auto values = [&](const char *knob) {
    for (const Knob &k : space.knobs)
      if (k.name == knob) return k.values;
    return std::vector<int64_t>{};
  };
  for (int V = 1; V <= vthreads; ++V)
    for (int64_t th : values("tile_h"))
      for (int64_t tw : values("tile_w"))
        for (int64_t toc : values("tile_oc"))
          for (int64_t tic : values("tile_ic"))
            for (int64_t moc : values("mid_oc"))
              for (int64_t mic : values("mid_ic")) {
                for (int64_t resident : values("resident"))
                  for (int64_t once : values("bias_once")) {
                    AccelSchedule s = space.base;
                    s.resident = static_cast<AccelSchedule::Resident>(resident);
                    s.bias_once = once != 0;
                    s.tile_h = th;
                    s.tile_w = tw;
                    s.tile_oc = toc;
                    s.tile_ic = tic;
                    s.mid_oc = moc;
                    s.mid_ic = mic;
                    s.vthreads = V;
                    if (check_schedule(c, p, s)) continue;
                    const double cost = chain_cost(c, p, s);
                    if (cost < best_cost) {
                      best_cost = cost;
                      best = s;
                    }
                  }
              }
  if (best_cost == std::numeric_limits<double>::infinity()) {
    AccelSchedule smallest = space.base;
    smallest.resident = AccelSchedule::Resident::kInputs;
    smallest.tile_h = smallest.tile_w = smallest.tile_oc = smallest.tile_ic = 1;
    smallest.mid_oc = smallest.mid_ic = 1;
    const ChainNeeds n = chain_needs(c, p, smallest);
    fail(
        "{}: no tiling of the chain fits: one output pixel needs {} INP tiles (the kept result "
        "of {} channel blocks and the first convolution's input), {} WGT and {} ACC, and config "
        "'{}' has {}, {} and {} (buffers.inp_kib, wgt_kib, acc_kib); run the two convolutions "
        "apart",
        name, n.inp, p.first.out_channels / c.block_out, n.wgt, n.acc, c.name, c.inp_depth(),
        c.wgt_depth(), c.acc_depth());
  }
  return {best, best_cost};
}

}  // namespace

AccelSchedule default_schedule(const isa::HwConfig &c, const ConvChainParams &p, int vthreads,
                               const std::string &name) {
  return best_schedule(c, p, vthreads, name).first;
}

double modelled_cycles(const isa::HwConfig &c, const ConvChainParams &p, int vthreads,
                       const std::string &name) {
  return best_schedule(c, p, vthreads, name).second;
}

Operator define(const isa::HwConfig &c, const ConvChainParams &p, const AccelSchedule &sc,
                const std::string &name) {
  if (auto why = check_schedule(c, p, sc)) fail("{}: schedule {}: {}", name, describe(sc), *why);
  const Conv2dParams &a = p.first, &b = p.second;
  const int64_t NB = a.batch / c.batch, CB = a.in_channels / c.block_in,
                MB = a.out_channels / c.block_out, OB = b.out_channels / c.block_out;
  const int64_t OH = a.out_height(), OW = a.out_width();
  const tir::DataType it = tir::DataType::int_(c.inp_bits), wt = tir::DataType::int_(c.wgt_bits),
                      at = tir::DataType::int_(c.acc_bits);
  te::Tensor data = te::placeholder("data", {NB, CB, a.height, a.width, c.batch, c.block_in}, it);
  te::Tensor kernel1 = te::placeholder(
      "kernel1", {MB, CB / a.groups, a.kernel_h, a.kernel_w, c.block_out, c.block_in}, wt);
  te::Tensor bias1 = te::placeholder("bias1", {NB, MB, c.batch, c.block_out}, at);
  te::Tensor shifts1 = te::placeholder("shifts1", {NB, MB, c.batch, c.block_out}, at);
  te::Tensor mults1 = te::placeholder("multipliers1", {NB, MB, c.batch, c.block_out}, at);
  te::Tensor kernel2 = te::placeholder("kernel2", {OB, MB, 1, 1, c.block_out, c.block_in}, wt);
  te::Tensor bias2 = te::placeholder("bias2", {NB, OB, c.batch, c.block_out}, at);
  te::Tensor shifts2 = te::placeholder("shifts2", {NB, OB, c.batch, c.block_out}, at);
  te::Tensor mults2 = te::placeholder("multipliers2", {NB, OB, c.batch, c.block_out}, at);
  auto channel = [](const te::Tensor &t) -> ChannelIndex {
    return [t](const auto &v) { return (*t)({v[0], v[1], v[4], v[5]}); };
  };

  // The first convolution and its requantization; its narrowed result `mid` lives in INP.
  const Convolution conv1 = convolution(c, a, data, kernel1, "first_");
  const std::vector<te::Tensor> stages1 =
      requantize(conv1.conv, a.requant, c, channel(bias1), channel(shifts1), channel(mults1));
  const te::Tensor mid = stages1.back();
  // The second: a GEMM over the kept result's blocks at each pixel.
  const te::Tensor conv2 = te::reduce_sum(
      "second_conv", {NB, OB, OH, OW, c.batch, c.block_out}, {{"ic", MB}, {"ic_t", c.block_in}},
      [&](const auto &v, const auto &r) {
        return tir::cast(at, (*mid)({v[0], r[0], v[2], v[3], v[4], r[1]})) *
               tir::cast(at, (*kernel2)({v[1], r[0], 0, 0, v[5], r[1]}));
      },
      {"n", "oc", "oh", "ow", "b", "oc_t"});
  std::vector<te::Tensor> stages2 =
      requantize(conv2, b.requant, c, channel(bias2), channel(shifts2), channel(mults2));
  te::Tensor out = stages2.back();
  // A residual add on the second (a ResNet bottleneck's last convolution, a MobileNetV2
  // block's projection): the skip tile through the GEMM core, then the add's ALU stages.
  std::optional<ResidualStages> residual;
  if (b.residual) {
    residual = residual_stages(c, *b.residual, &stages2, {NB, OB, OH, OW, c.batch, c.block_out});
    out = residual->out;
  }

  schedule::Schedule s({out});
  s[conv1.pad].compute_inline();
  const te::Tensor data_l = s.cache_read(conv1.pad, Scope::kInp, {conv1.conv});
  const te::Tensor kernel1_l = s.cache_read(kernel1, Scope::kWgt, {conv1.conv});
  const te::Tensor kernel2_l = s.cache_read(kernel2, Scope::kWgt, {conv2});
  // Per-channel vectors of both requantizations, each with the stage that reads it.
  struct Vector {
    te::Tensor tensor;
    bool used;
    te::Tensor reader;
    bool first;
  };
  const std::vector<Vector> vectors = {
      {bias1, true, stages1[0], true},
      {shifts1, a.requant.per_channel(), a.requant.per_channel() ? stages1[1] : stages1[0], true},
      {mults1, a.requant.multiplied(),
       a.requant.multiplied() ? stages1[kMultiplyStage] : stages1[0], true},
      {bias2, true, stages2[0], false},
      {shifts2, b.requant.per_channel(), b.requant.per_channel() ? stages2[1] : stages2[0], false},
      {mults2, b.requant.multiplied(),
       b.requant.multiplied() ? stages2[kMultiplyStage] : stages2[0], false}};
  std::vector<std::pair<te::Tensor, bool>> vectors_l;  // loaded into ACC; of the first?
  for (const Vector &v : vectors)
    if (v.used) vectors_l.emplace_back(s.cache_read(v.tensor, Scope::kAcc, {v.reader}), v.first);
  s[conv1.conv].set_scope(Scope::kAcc);
  s[conv2].set_scope(Scope::kAcc);
  for (size_t i = 0; i + 1 < stages1.size(); ++i) s[stages1[i]].set_scope(Scope::kAcc);
  for (size_t i = 0; i + 1 < stages2.size(); ++i) s[stages2[i]].set_scope(Scope::kAcc);
  s[mid].set_scope(Scope::kInp);

  // The output: spatial tiles outside the second's channel tiles, the threads over the rows.
  auto &so = s[out];
  AccelSchedule spatial_outside = sc;
  spatial_outside.resident = AccelSchedule::Resident::kInputs;
  const OutputTiling t = tile_blocked_output(s, out, spatial_outside);
  const bool weights_resident = sc.resident == AccelSchedule::Resident::kWeights;
  // The kept result: computed once per spatial tile for all its channels, mid_oc blocks per
  // accumulator tile, each tile narrowed into INP (a STORE INP).
  auto &smid = s[mid];
  smid.compute_at(so, t.spatial);
  auto ma = smid.axis();
  auto [m_o, m_i] = smid.split(ma[1], sc.mid_oc);
  smid.reorder({ma[0], m_o, m_i, ma[2], ma[3], ma[4], ma[5]});
  smid.pragma(m_i, "dma_copy");
  const te::IterVar ic1 = schedule_convolution(s, conv1.conv, smid, m_o, sc.tile_ic);
  s[data_l].compute_at(s[conv1.conv], ic1);
  if (weights_resident)
    s[kernel1_l].compute_at(so, t.thread);
  else
    s[kernel1_l].compute_at(s[conv1.conv], ic1);
  for (size_t i = 0; i + 1 < stages1.size(); ++i) {
    s[stages1[i]].compute_at(smid, m_o);
    s[stages1[i]].pragma(s[stages1[i]].axis()[0], "alu");
  }
  // The second convolution per output tile, mid_ic of the kept blocks per weight load.
  auto &sconv2 = s[conv2];
  sconv2.compute_at(so, t.tile);
  auto ca = sconv2.axis();
  auto cr = sconv2.reduce_axis();
  auto [j_o, j_i] = sconv2.split(cr[0], sc.mid_ic);
  sconv2.reorder({ca[0], j_o, j_i, ca[1], ca[2], ca[3], ca[4], ca[5], cr[1]});
  sconv2.tensorize(ca[4], "gemm");
  if (weights_resident)
    s[kernel2_l].compute_at(so, t.thread);
  else
    s[kernel2_l].compute_at(sconv2, j_o);
  for (size_t i = 0; i + 1 < stages2.size(); ++i) {
    s[stages2[i]].compute_at(so, t.tile);
    s[stages2[i]].pragma(s[stages2[i]].axis()[0], "alu");
  }
  if (residual)
    schedule_residual(s, *residual, stages2.back(), so, t.tile,
                      weights_resident ? t.thread : t.channels);
  for (const te::Tensor &l : {data_l, kernel1_l, kernel2_l})
    s[l].pragma(s[l].axis()[0], "dma_copy");
  for (const auto &[l, first] : vectors_l) {
    if (sc.bias_once)
      s[l].compute_at(so, t.thread);
    else if (first)
      s[l].compute_at(smid, m_o);
    else
      s[l].compute_at(so, t.channels);
    s[l].pragma(s[l].axis()[0], "dma_copy");
  }

  Operator op;
  op.args = {data, kernel1, bias1};
  if (a.requant.per_channel()) op.args.push_back(shifts1);
  if (a.requant.multiplied()) op.args.push_back(mults1);
  op.args.insert(op.args.end(), {kernel2, bias2});
  if (b.requant.per_channel()) op.args.push_back(shifts2);
  if (b.requant.multiplied()) op.args.push_back(mults2);
  if (residual) op.args.insert(op.args.end(), {residual->skip, residual->skip_weight});
  op.args.push_back(out);
  op.func = schedule::to_loop_ir(s, name, op.args);
  return op;
}

}  // namespace vacc::lower
