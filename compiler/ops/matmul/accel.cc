// dense on the accelerator with bias add, ReLU and shift-and-clip requantization fused on the
// ALU: what it supports, its default schedule and its compute definition (operators.h).
#include <fmt/format.h>

#include <limits>
#include <tuple>
#include <vector>

#include "lower/ops/divisors.h"
#include "lower/ops/modelled_time.h"
#include "lower/ops/requantize.h"
#include "lower/ops/schedule_rules.h"
#include "vacc/lower/operators.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/schedule/schedule.h"
#include "vacc/schedule/to_loop_ir.h"
#include "vacc/support/error.h"
#include "vacc/tir/ops.h"

namespace vacc::lower {

using tir::Expr;
using tir::Scope;

void check_supported(const isa::HwConfig &c, const DenseParams &p, const std::string &name) {
  for (auto [what, v, block, key] :
       {std::tuple{"batch", p.batch, c.batch, "gemm.batch"},
        std::tuple{"in_features", p.in_features, c.block_in, "gemm.block_in"},
        std::tuple{"out_features", p.out_features, c.block_out, "gemm.block_out"}}) {
    if (v <= 0 || v % block != 0)
      fail("{}: {} = {} is not a positive multiple of {} = {}; pad it on the host", name, what, v,
           key, block);
  }
  check_requant_supported(c, p.requant, p.out_features, name);
}

namespace {

// A dense layer of many rows (a transformer's tokens, a channels-last MLP's pixels): tiles of
// tile_h rows share each weight load, which one row per tile would bring again for every row
// (ConvNeXt-Tiny's MLP layers moved 128 MB each that way). The tiling is the one whose
// modelled time is least: GEMM and requantization against DRAM traffic (weights, bias and
// shifts once per row tile, the input once per output-channel tile) plus instructions.
AccelSchedule rows_schedule(const isa::HwConfig &c, const DenseParams &p, int64_t NB, int64_t OB,
                            int64_t CB, int64_t V, const std::string &name) {
  const int64_t acc_cap = c.acc_depth() / V, inp_cap = c.inp_depth() / V,
                wgt_cap = c.wgt_depth() / V;
  const int64_t vectors = 1 + channel_vectors(p.requant);  // bias, shifts, multipliers
  const double gemm = double(NB) * OB * CB,
               alu = double(NB) * OB * alu_cycles_per_tile(p.requant, c);
  AccelSchedule best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (int64_t tn : divisors(NB))
    for (int64_t toc : divisors(OB)) {
      if ((OB / toc) % V != 0 || (tn + vectors) * toc > acc_cap) continue;
      for (int64_t tic : divisors(CB)) {
        if (tn * tic > inp_cap || toc * tic > wgt_cap) continue;
        const double bytes =
            double(NB / tn) * OB * (CB * c.wgt_tile_bytes() + vectors * c.acc_tile_bytes()) +
            double(OB / toc) * NB * CB * c.inp_tile_bytes() + double(NB) * OB * c.out_tile_bytes();
        const double insns =
            double(NB / tn) * double(OB / toc) * (double(CB / tic) * 3 + 4 + vectors);
        const double compute = V > 1 ? std::max(gemm, alu) : gemm + alu;
        const double memory = bytes / c.mem_bytes_per_cycle;
        const double cost = modelled_time(compute, memory, static_cast<int>(V)) + 8 * insns;
        if (cost < best_cost) {
          best_cost = cost;
          best.tile_h = tn;
          best.tile_w = 1;
          best.tile_oc = toc;
          best.tile_ic = tic;
          best.vthreads = static_cast<int>(V);
        }
      }
    }
  if (best_cost == std::numeric_limits<double>::infinity())
    fail("{}: no tile fits the scratchpads of config '{}' with {} virtual thread(s)", name, c.name,
         V);
  return best;
}

}  // namespace

AccelSchedule default_schedule(const isa::HwConfig &c, const DenseParams &p, int vthreads,
                               const std::string &name) {
  if (vthreads < 1 || vthreads > 2) fail("{}: vthreads = {} must be 1 or 2", name, vthreads);
  const int64_t OB = p.out_features / c.block_out, CB = p.in_features / c.block_in;
  if (OB % vthreads != 0) vthreads = 1;
  const int64_t V = vthreads;
  const int64_t acc_cap = c.acc_depth() / V, inp_cap = c.inp_depth() / V,
                wgt_cap = c.wgt_depth() / V;
  const int64_t NB = p.batch / c.batch;
  if (NB > 1) return rows_schedule(c, p, NB, OB, CB, V, name);
  AccelSchedule best;
  int64_t best_work = 0;
  for (int64_t toc : divisors(OB)) {
    if ((OB / toc) % V != 0 || (1 + channel_vectors(p.requant)) * toc > acc_cap) continue;
    for (int64_t tic : divisors(CB)) {
      if (tic > inp_cap || toc * tic > wgt_cap) continue;
      // Fewest instructions: the most work per tile, then the widest reduction.
      const int64_t work = toc * tic * 4 + tic;
      if (work > best_work) {
        best_work = work;
        best.tile_oc = toc;
        best.tile_ic = tic;
        best.tile_h = best.tile_w = 1;
        best.vthreads = vthreads;
      }
    }
  }
  if (best_work == 0)
    fail("{}: no tile fits the scratchpads of config '{}' with {} virtual thread(s)", name, c.name,
         V);
  // The row's input kept in INP (inputs resident) serves every channel tile of a thread, which
  // would otherwise load it again each: the models measured (bench/RESULTS.md, "The loop
  // order") took the same or fewer cycles, the Fashion-MNIST CNN on small 1.021x fewer.
  if (CB <= inp_cap && OB / best.tile_oc / V > 1) best.resident = AccelSchedule::Resident::kInputs;
  return best;
}

ScheduleSpace schedule_space(const isa::HwConfig &c, const DenseParams &p) {
  const int64_t OB = p.out_features / c.block_out, CB = p.in_features / c.block_in;
  const int64_t NB = p.batch / c.batch;
  ScheduleSpace space;
  space.op = "dense";
  space.base.tile_h = space.base.tile_w = 1;
  if (NB > 1)
    space.knobs.push_back({"tile_h", tile_sizes(NB),
                           "row blocks per tile: the weights reused by more rows (less weight "
                           "traffic); more INP and ACC"});
  space.knobs.push_back({"tile_oc", tile_sizes(OB),
                         "output blocks per tile: the input reused by more blocks; more WGT "
                         "and ACC"});
  space.knobs.push_back({"tile_ic", tile_sizes(CB),
                         "input blocks per load: fewer, longer loads and GEMMs; more INP and "
                         "WGT"});
  space.knobs.push_back({"vthreads",
                         {1, 2, 3, 4},
                         "2 to 4: each thread's loads under the others' compute, each with 1/V "
                         "of every scratchpad"});
  // One row block: the weights are loaded once whatever the order, the input once per
  // channel tile unless resident.
  space.knobs.push_back(
      {"resident", NB > 1 ? std::vector<int64_t>{0, 1, 2} : std::vector<int64_t>{0, 2},
       "the loop order: 0 channel tiles outside row tiles, both operands loaded per tile; 1 the "
       "same, a channel tile's weights (all input blocks) loaded once for all row tiles (WGT "
       "holds them); 2 row tiles outside, a row tile's input (all input blocks) loaded once for "
       "all channel tiles (INP holds it)"});
  return space;
}

std::optional<std::string> check_schedule(const isa::HwConfig &c, const DenseParams &p,
                                          const AccelSchedule &s) {
  const int64_t OB = p.out_features / c.block_out, CB = p.in_features / c.block_in;
  const int64_t NB = p.batch / c.batch, V = s.vthreads;
  if (s.tile_w != 1 || s.vthread_rows || s.bias_once)
    return std::string(
        "a dense layer's tiles are rows of vectors: tile_w = 1, no vthread_rows "
        "or bias_once");
  if (auto why = check_tile_sizes(
          {{"tile_h", s.tile_h, NB}, {"tile_oc", s.tile_oc, OB}, {"tile_ic", s.tile_ic, CB}}))
    return why;
  if (auto why = check_threads(V, tile_count(OB, s.tile_oc), "channel")) return why;
  // The capacities of default_schedule's searches (rows_schedule with several row blocks).
  if (auto why =
          check_fits("ACC", (s.tile_h + channel_vectors(p.requant)) * s.tile_oc, c.acc_depth() / V))
    return why;
  using Resident = AccelSchedule::Resident;
  // A resident operand's input blocks as the tiles span them (tails included).
  const int64_t all_ib = tiled_extent(CB, s.tile_ic);
  const int64_t inp_blocks = s.resident == Resident::kInputs ? all_ib : s.tile_ic;
  if (auto why = check_fits("INP", s.tile_h * inp_blocks, c.inp_depth() / V)) return why;
  const int64_t wgt_blocks = s.resident == Resident::kWeights ? all_ib : s.tile_ic;
  return check_fits("WGT", s.tile_oc * wgt_blocks, c.wgt_depth() / V);
}

Operator define(const isa::HwConfig &c, const DenseParams &p, const AccelSchedule &sc,
                const std::string &name) {
  VACC_CHECK(p.batch % c.batch == 0 && p.in_features % c.block_in == 0 &&
             p.out_features % c.block_out == 0 && p.groups >= 1)
      << name << ": define() before check_supported()";
  int64_t NB = p.batch / c.batch, CB = p.in_features / c.block_in,
          OB = p.out_features / c.block_out;
  tir::DataType it = tir::DataType::int_(c.inp_bits), wt = tir::DataType::int_(c.wgt_bits),
                at = tir::DataType::int_(c.acc_bits);
  // Groups (vacc.QMatMul) lead every tensor's shape and index; o is where a group's own axes
  // start.
  const bool grouped = p.groups > 1;
  const size_t o = grouped ? 1 : 0;
  auto shape = [&](std::vector<int64_t> s) {
    if (grouped) s.insert(s.begin(), p.groups);
    return s;
  };
  auto at_group = [&](const auto &v, std::vector<Expr> idx) {
    if (grouped) idx.insert(idx.begin(), v[0]);
    return idx;
  };
  std::vector<std::string> names = {"n", "oc", "b", "oc_t"};
  if (grouped) names.insert(names.begin(), "g");
  te::Tensor data = te::placeholder("data", shape({NB, CB, c.batch, c.block_in}), it);
  te::Tensor weight = te::placeholder("weight", shape({OB, CB, c.block_out, c.block_in}), wt);
  // Bias, shifts and multipliers are the same for every row: one row of them, read by all
  // (a dense layer of many rows would otherwise move a copy per row).
  te::Tensor bias = te::placeholder("bias", shape({1, OB, c.batch, c.block_out}), at);
  te::Tensor acc = te::reduce_sum(
      "dense", shape({NB, OB, c.batch, c.block_out}), {{"ic", CB}, {"ic_t", c.block_in}},
      [&](const auto &v, const auto &r) {
        return tir::cast(at, (*data)(at_group(v, {v[o], r[0], v[o + 2], r[1]}))) *
               tir::cast(at, (*weight)(at_group(v, {v[o + 1], r[0], v[o + 3], r[1]})));
      },
      names);
  te::Tensor shifts = te::placeholder("shifts", shape({1, OB, c.batch, c.block_out}), at);
  te::Tensor mults = te::placeholder("multipliers", shape({1, OB, c.batch, c.block_out}), at);
  auto channel = [&](const te::Tensor &t) -> ChannelIndex {
    return [t, at_group, o](const auto &v) {
      return (*t)(at_group(v, {tir::make_const(tir::int32(), 0), v[o + 1], v[o + 2], v[o + 3]}));
    };
  };
  auto stages = requantize(acc, p.requant, c, channel(bias), channel(shifts), channel(mults));
  te::Tensor out = stages.back();

  schedule::Schedule s({out});
  te::Tensor data_l = s.cache_read(data, Scope::kInp, {acc});
  te::Tensor weight_l = s.cache_read(weight, Scope::kWgt, {acc});
  te::Tensor bias_l = s.cache_read(bias, Scope::kAcc, {stages[0]});
  std::optional<te::Tensor> shifts_l;
  if (p.requant.per_channel()) shifts_l = s.cache_read(shifts, Scope::kAcc, {stages[1]});
  std::optional<te::Tensor> mults_l;
  if (p.requant.multiplied()) mults_l = s.cache_read(mults, Scope::kAcc, {stages[kMultiplyStage]});
  s[acc].set_scope(Scope::kAcc);
  for (size_t i = 0; i + 1 < stages.size(); ++i) s[stages[i]].set_scope(Scope::kAcc);

  auto &so = s[out];
  auto ax = so.axis();
  auto [oc_o, oc_i] = so.split(ax[o + 1], sc.tile_oc);
  std::vector<te::IterVar> order;
  te::IterVar channels = oc_o;
  if (sc.vthreads > 1) {
    auto [vt, oc_rest] = so.split_nparts(oc_o, sc.vthreads);
    so.bind_vthread(vt);
    order = {vt};
    channels = oc_rest;
  }
  // Rows: one per tile, or tiles of tile_h rows that share their weight loads.
  te::IterVar rows = ax[o];
  std::vector<te::IterVar> inner = {oc_i, ax[o + 2], ax[o + 3]};
  te::IterVar store = oc_i;
  if (sc.tile_h > 1) {
    auto [n_o, n_i] = so.split(ax[o], sc.tile_h);
    rows = n_o;
    inner.insert(inner.begin(), n_i);
    store = n_i;
  }
  // The channel tiles outside the row tiles (the groups between them, inside a thread's
  // channel blocks), or inside them with the inputs resident.
  using Resident = AccelSchedule::Resident;
  const bool inputs_resident = sc.resident == Resident::kInputs;
  if (inputs_resident) {
    if (grouped) order.push_back(ax[0]);
    order.insert(order.end(), {rows, channels});
  } else {
    order.push_back(channels);
    if (grouped) order.push_back(ax[0]);
    order.push_back(rows);
  }
  order.insert(order.end(), inner.begin(), inner.end());
  so.reorder(order);
  so.pragma(store, "dma_copy");
  const te::IterVar store_at = inputs_resident ? channels : rows;

  auto &sd = s[acc];
  sd.compute_at(so, store_at);
  auto da = sd.axis();
  auto dr = sd.reduce_axis();
  auto [ic_o, ic_i] = sd.split(dr[0], sc.tile_ic);
  std::vector<te::IterVar> dorder = {ic_o, ic_i};
  dorder.insert(dorder.end(), da.begin(), da.end());
  dorder.push_back(dr[1]);
  sd.reorder(dorder);
  sd.tensorize(da[o + 2], "gemm");
  // A resident operand's load covers all input blocks, outside the loop over the other's tiles.
  if (inputs_resident)
    s[data_l].compute_at(so, rows);
  else
    s[data_l].compute_at(sd, ic_o);
  if (sc.resident == Resident::kWeights)
    s[weight_l].compute_at(so, grouped ? ax[0] : channels);
  else
    s[weight_l].compute_at(sd, ic_o);
  s[data_l].pragma(s[data_l].axis()[0], "dma_copy");
  s[weight_l].pragma(s[weight_l].axis()[0], "dma_copy");
  s[bias_l].compute_at(so, store_at);
  s[bias_l].pragma(s[bias_l].axis()[0], "dma_copy");
  for (const auto &vector : {shifts_l, mults_l}) {
    if (!vector) continue;
    s[*vector].compute_at(so, store_at);
    s[*vector].pragma(s[*vector].axis()[0], "dma_copy");
  }
  for (size_t i = 0; i + 1 < stages.size(); ++i) {
    s[stages[i]].compute_at(so, store_at);
    s[stages[i]].pragma(s[stages[i]].axis()[0], "alu");
  }
  Operator op;
  op.args = {data, weight, bias};
  if (p.requant.per_channel()) op.args.push_back(shifts);
  if (p.requant.multiplied()) op.args.push_back(mults);
  op.args.push_back(out);
  op.func = schedule::to_loop_ir(s, name, op.args);
  return op;
}

}  // namespace vacc::lower
