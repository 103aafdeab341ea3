// The residual elementwise add on the accelerator (vacc.QAdd of docs/quantization.md):
//   out = clip(((a << lshift_a) + (b << lshift_b) + round) >> rshift, lo, hi) narrowed,
// round = 2^(rshift-1) when rshift > 0. The ALU reads only ACC tiles and int8 activations
// cannot be loaded into ACC, so each input reaches the accumulators through the GEMM core:
// acc = inp · (2^k · I) with k = min(lshift, 6) (the largest power of two an int8 weight
// holds), the rest of the left shift is an ALU shr by a negative immediate. Then ALU add
// (vector), add (rounding), shr, max, min, all in place on the first input's tile.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "lower/ops/divisors.h"
#include "lower/ops/schedule_rules.h"
#include "lower/ops/tile_output.h"
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

}  // namespace

Operator define(const isa::HwConfig &c, const AddParams &p, const AccelSchedule &sc,
                const std::string &name) {
  VACC_CHECK(c.block_in == c.block_out && p.channels % c.block_out == 0 && p.batch % c.batch == 0)
      << name << ": define() before check_supported()";
  const int64_t NB = p.batch / c.batch, CB = p.channels / c.block_out;
  const tir::DataType it = tir::DataType::int_(c.inp_bits), wt = tir::DataType::int_(c.wgt_bits),
                      at = tir::DataType::int_(c.acc_bits);
  const std::vector<int64_t> shape = {NB, CB, p.height, p.width, c.batch, c.block_out};
  const std::vector<std::string> names = {"n", "c", "h", "w", "b", "o"};
  te::Tensor a = te::placeholder("a", shape, it);
  te::Tensor b = te::placeholder("b", shape, it);
  te::Tensor weight = te::placeholder("weight", {2, c.block_out, c.block_in}, wt);
  auto through_gemm = [&](const std::string &tname, const te::Tensor &x, int64_t k) {
    return te::reduce_sum(
        tname, shape, {{"one", 1}, {"ci", c.block_in}},
        [&, k](const auto &v, const auto &r) {
          return tir::cast(at, (*x)({v[0], v[1], v[2], v[3], v[4], r[1]})) *
                 tir::cast(at, (*weight)({tir::make_const(tir::int32(), k) + r[0], v[5], r[1]}));
        },
        names);
  };
  te::Tensor sa = through_gemm("sum_a", a, 0), sb = through_gemm("sum_b", b, 1);
  const AddStages alu = add_stages(sa, p.lshift_a - weight_shift(p.lshift_a), sb,
                                   p.lshift_b - weight_shift(p.lshift_b), p.rshift,
                                   p.lo(c.inp_bits), p.hi(c.inp_bits), c);
  const te::Tensor &out = alu.out;

  schedule::Schedule s({out});
  te::Tensor a_l = s.cache_read(a, Scope::kInp, {sa});
  te::Tensor b_l = s.cache_read(b, Scope::kInp, {sb});
  te::Tensor w_l = s.cache_read(weight, Scope::kWgt, {sa, sb});
  std::vector<te::Tensor> acc_stages = {sa, sb};
  acc_stages.insert(acc_stages.end(), alu.acc.begin(), alu.acc.end());
  for (const te::Tensor &t : acc_stages) s[t].set_scope(Scope::kAcc);

  auto &so = s[out];
  const te::IterVar ow_o = tile_blocked_output(s, out, sc).tile;

  s[w_l].compute_at(so, ow_o);
  s[w_l].pragma(s[w_l].axis()[0], "dma_copy");
  schedule_through_gemm(s, sa, a_l, so, ow_o);
  schedule_through_gemm(s, sb, b_l, so, ow_o);
  for (size_t i = 2; i < acc_stages.size(); ++i) {
    s[acc_stages[i]].compute_at(so, ow_o);
    s[acc_stages[i]].pragma(s[acc_stages[i]].axis()[0], "alu");
  }
  Operator op;
  op.args = {a, b, weight, out};
  op.func = schedule::to_loop_ir(s, name, op.args);
  return op;
}

void check_supported(const isa::HwConfig &c, const AddParams &p, const std::string &name) {
  if (c.block_in != c.block_out)
    fail(
        "{}: the add moves int8 tiles through the GEMM core with an identity weight, which "
        "needs gemm.block_in ({}) == gemm.block_out ({})",
        name, c.block_in, c.block_out);
  for (auto [what, v, block, key] :
       {std::tuple{"batch", p.batch, c.batch, "gemm.batch"},
        std::tuple{"channels", p.channels, c.block_out, "gemm.block_out"}}) {
    if (v <= 0 || v % block != 0)
      fail("{}: {} = {} is not a positive multiple of {} = {}; pad it on the host", name, what, v,
           key, block);
  }
  if (p.height <= 0 || p.width <= 0)
    fail("{}: height = {} and width = {} must be positive", name, p.height, p.width);
  check_add_arithmetic(c, p.lshift_a, p.lshift_b, p.rshift, p.lo(c.inp_bits), p.hi(c.inp_bits),
                       name);
}

AccelSchedule default_schedule(const isa::HwConfig &c, const AddParams &p, int vthreads,
                               const std::string &name) {
  if (vthreads < 1 || vthreads > 2) fail("{}: vthreads = {} must be 1 or 2", name, vthreads);
  const int64_t CB = p.channels / c.block_out;
  if (CB % vthreads != 0) vthreads = 1;
  const int64_t V = vthreads;
  // Per virtual thread: two ACC tiles (the two sums) and two INP tiles per output tile.
  const int64_t acc_cap = c.acc_depth() / V / 2, inp_cap = c.inp_depth() / V / 2;
  AccelSchedule best;
  int64_t best_tiles = 0;
  // Whole rows (contiguous DMA), the most output tiles per round.
  for (int64_t tc : divisors(CB)) {
    if ((CB / tc) % V != 0) continue;
    for (int64_t th : divisors(p.height)) {
      for (int64_t tw : {p.width}) {
        const int64_t tiles = tc * th * tw;
        if (tiles > acc_cap || tiles > inp_cap || tiles <= best_tiles) continue;
        best_tiles = tiles;
        best.tile_oc = tc;
        best.tile_h = th;
        best.tile_w = tw;
        best.tile_ic = 1;
        best.vthreads = vthreads;
      }
    }
  }
  if (best_tiles == 0) {
    // Rows too long: tile the width too.
    for (int64_t tw : divisors(p.width)) {
      if (tw > acc_cap || tw > inp_cap || tw <= best_tiles) continue;
      best_tiles = tw;
      best = AccelSchedule{1, tw, 1, 1, vthreads};
    }
  }
  if (best_tiles == 0)
    fail("{}: no tile fits the scratchpads of config '{}' with {} virtual thread(s)", name, c.name,
         V);
  return best;
}

ScheduleSpace schedule_space(const isa::HwConfig &c, const AddParams &p) {
  ScheduleSpace space;
  space.op = "add";
  space.base.tile_ic = 1;
  space.knobs = {
      {"tile_oc", tile_sizes(p.channels / c.block_out),
       "channel blocks per tile: fewer, longer loads and ALU runs; more INP and ACC"},
      {"tile_h", tile_sizes(p.height), "rows per tile: as tile_oc"},
      {"tile_w", tile_sizes(p.width), "columns per tile: as tile_oc"},
      {"vthreads",
       {1, 2},
       "2: one thread's loads under the other's compute, each with half of every scratchpad"},
  };
  return space;
}

std::optional<std::string> check_schedule(const isa::HwConfig &c, const AddParams &p,
                                          const AccelSchedule &s) {
  const int64_t CB = p.channels / c.block_out, V = s.vthreads;
  if (s.tile_ic != 1 || s.vthread_rows || s.bias_once ||
      s.resident != AccelSchedule::Resident::kNone)
    return std::string(
        "an add tiles channels, rows and columns: tile_ic = 1, no vthread_rows, "
        "bias_once or resident operand");
  if (auto why = check_tile_sizes({{"tile_oc", s.tile_oc, CB},
                                   {"tile_h", s.tile_h, p.height},
                                   {"tile_w", s.tile_w, p.width}}))
    return why;
  if (auto why = check_threads(V, tile_count(CB, s.tile_oc), "channel")) return why;
  // Both operands' tiles side by side in ACC and in INP (default_schedule's halves).
  const int64_t tiles = s.tile_oc * s.tile_h * s.tile_w;
  if (auto why = check_fits("ACC", tiles, c.acc_depth() / V / 2)) return why;
  return check_fits("INP", tiles, c.inp_depth() / V / 2);
}

std::vector<int64_t> residual_weight(const isa::HwConfig &c, const Residual &r) {
  std::vector<int64_t> w(c.block_out * c.block_in, 0);
  for (int64_t o = 0; o < std::min(c.block_out, c.block_in); ++o)
    w[o * c.block_in + o] = int64_t{1} << weight_shift(r.lshift_skip);
  return w;
}

std::vector<int64_t> add_weight(const isa::HwConfig &c, const AddParams &p) {
  std::vector<int64_t> w(2 * c.block_out * c.block_in, 0);
  const int64_t scale[2] = {int64_t{1} << weight_shift(p.lshift_a),
                            int64_t{1} << weight_shift(p.lshift_b)};
  for (int k = 0; k < 2; ++k)
    for (int64_t o = 0; o < std::min(c.block_out, c.block_in); ++o)
      w[(k * c.block_out + o) * c.block_in + o] = scale[k];
  return w;
}

}  // namespace vacc::lower
