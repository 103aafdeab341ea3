#include "vacc/compiler/ops.h"

#include "vacc/compiler/tile_output.h"
#include "vacc/schedule/lower.h"
#include "vacc/schedule/schedule.h"
#include "vacc/support/error.h"
#include "vacc/tir/ops.h"

namespace vacc::compiler {
namespace {

using tir::Expr;
using tir::Scope;

void check_multiple(int64_t v, int64_t block, const char *what, const std::string &op) {
  if (v % block != 0) {
    fail("{}: {} = {} is not a multiple of the config's block of {}; pad the channels", op, what, v,
         block);
  }
}

// bias add, shift (by an immediate, or by the per-channel `shifts` tensor as an ACC vector
// operand), clip: each an ALU stage in the acc scope; returns the stages, the narrowed output
// last.
std::vector<te::Tensor> requantize(const te::Tensor &acc, const Requant &q, int out_bits,
                                   const std::function<Expr(const std::vector<tir::Var> &)> &bidx,
                                   const std::function<Expr(const std::vector<tir::Var> &)> &sidx) {
  const auto &shape = acc->shape();
  tir::DataType at = acc->dtype();
  std::vector<std::string> names;
  for (const auto &ax : acc->axes) names.push_back(ax->var->name);
  auto idx = [](const std::vector<tir::Var> &v) { return std::vector<Expr>(v.begin(), v.end()); };
  te::Tensor with_bias = te::compute(
      "bias_add", shape, [&](const auto &v) { return (*acc)(idx(v)) + bidx(v); }, names);
  te::Tensor shifted = te::compute(
      "shift", shape,
      [&](const auto &v) {
        return (*with_bias)(idx(v)) >> (q.per_channel() ? sidx(v) : tir::make_const(at, q.shift));
      },
      names);
  const int64_t hi = q.hi(out_bits), lo = q.lo(out_bits);
  te::Tensor low = te::compute(
      "clip_lo", shape,
      [&](const auto &v) { return tir::max((*shifted)(idx(v)), tir::make_const(at, lo)); }, names);
  te::Tensor high = te::compute(
      "clip_hi", shape,
      [&](const auto &v) { return tir::min((*low)(idx(v)), tir::make_const(at, hi)); }, names);
  te::Tensor out = te::compute(
      "out", shape,
      [&](const auto &v) { return tir::cast(tir::DataType::int_(out_bits), (*high)(idx(v))); },
      names);
  return {with_bias, shifted, low, high, out};
}

}  // namespace

Operator conv2d_accel(const isa::HwConfig &c, const Conv2dParams &p, const AccelSchedule &sc,
                      const std::string &name) {
  check_multiple(p.batch, c.batch, "batch", name);
  check_multiple(p.in_channels, c.block_in, "in_channels", name);
  check_multiple(p.out_channels, c.block_out, "out_channels", name);
  int64_t NB = p.batch / c.batch, CB = p.in_channels / c.block_in,
          OB = p.out_channels / c.block_out;
  int64_t OH = p.out_height(), OW = p.out_width();
  if (OH <= 0 || OW <= 0) fail("{}: the kernel is larger than the padded input", name);
  tir::DataType it = tir::DataType::int_(c.inp_bits), wt = tir::DataType::int_(c.wgt_bits),
                at = tir::DataType::int_(c.acc_bits);
  te::Tensor data = te::placeholder("data", {NB, CB, p.height, p.width, c.batch, c.block_in}, it);
  te::Tensor kernel =
      te::placeholder("kernel", {OB, CB, p.kernel_h, p.kernel_w, c.block_out, c.block_in}, wt);
  te::Tensor bias = te::placeholder("bias", {NB, OB, c.batch, c.block_out}, at);
  int64_t PH = p.height + 2 * p.pad_h, PW = p.width + 2 * p.pad_w;
  te::Tensor pad = te::compute(
      "pad", {NB, CB, PH, PW, c.batch, c.block_in},
      [&](const auto &v) {
        Expr h = v[2], w = v[3];
        Expr inside = h >= tir::make_const(tir::int32(), p.pad_h) &&
                      h < tir::make_const(tir::int32(), p.height + p.pad_h) &&
                      w >= tir::make_const(tir::int32(), p.pad_w) &&
                      w < tir::make_const(tir::int32(), p.width + p.pad_w);
        return tir::select(inside, (*data)({v[0], v[1], h - p.pad_h, w - p.pad_w, v[4], v[5]}),
                           tir::make_const(it, 0));
      },
      {"n", "c", "h", "w", "b", "ci"});
  te::Tensor conv =
      te::reduce_sum("conv", {NB, OB, OH, OW, c.batch, c.block_out},
                     {{"ic", CB}, {"kh", p.kernel_h}, {"kw", p.kernel_w}, {"ic_t", c.block_in}},
                     [&](const auto &v, const auto &r) {
                       Expr h = Expr(v[2]) * tir::make_const(tir::int32(), p.stride_h) + r[1];
                       Expr w = Expr(v[3]) * tir::make_const(tir::int32(), p.stride_w) + r[2];
                       return tir::cast(at, (*pad)({v[0], r[0], h, w, v[4], r[3]})) *
                              tir::cast(at, (*kernel)({v[1], r[0], r[1], r[2], v[5], r[3]}));
                     },
                     {"n", "oc", "oh", "ow", "b", "oc_t"});
  te::Tensor shifts = te::placeholder("shifts", {NB, OB, c.batch, c.block_out}, at);
  auto stages = requantize(
      conv, p.requant, c.inp_bits,
      [&](const auto &v) {
        return (*bias)({v[0], v[1], v[4], v[5]});
      },
      [&](const auto &v) {
        return (*shifts)({v[0], v[1], v[4], v[5]});
      });
  te::Tensor out = stages.back();

  schedule::Schedule s({out});
  s[pad].compute_inline();
  te::Tensor data_l = s.cache_read(pad, Scope::kInp, {conv});
  te::Tensor kernel_l = s.cache_read(kernel, Scope::kWgt, {conv});
  te::Tensor bias_l = s.cache_read(bias, Scope::kAcc, {stages[0]});
  std::optional<te::Tensor> shifts_l;
  if (p.requant.per_channel()) shifts_l = s.cache_read(shifts, Scope::kAcc, {stages[1]});
  s[conv].set_scope(Scope::kAcc);
  for (size_t i = 0; i + 1 < stages.size(); ++i) s[stages[i]].set_scope(Scope::kAcc);

    auto &so = s[out];
  const auto [thread, oc_o, ow_o] = tile_blocked_output(s, out, sc);

  // The convolution: input-channel blocks outermost, the GEMM tile innermost.
  auto &sconv = s[conv];
  sconv.compute_at(so, ow_o);
  auto ca = sconv.axis();
  auto cr = sconv.reduce_axis();
  auto [ic_o, ic_i] = sconv.split(cr[0], sc.tile_ic);
  sconv.reorder({ca[0], ic_o, cr[1], cr[2], ic_i, ca[1], ca[2], ca[3], ca[4], ca[5], cr[3]});
  sconv.tensorize(ca[4], "gemm");
  s[data_l].compute_at(sconv, ic_o);
  s[kernel_l].compute_at(sconv, ic_o);
  s[data_l].pragma(s[data_l].axis()[0], "dma_copy");
  s[kernel_l].pragma(s[kernel_l].axis()[0], "dma_copy");
  // Bias and shifts depend on the output channels only: loaded once per thread or per channel
  // block, not per tile, so no LOAD ACC (which waits for both compute units) interrupts the
  // GEMM/ALU overlap inside a channel block.
  const te::IterVar per_channel_at = sc.bias_once ? thread : oc_o;
  s[bias_l].compute_at(so, per_channel_at);
  s[bias_l].pragma(s[bias_l].axis()[0], "dma_copy");
  if (shifts_l) {
    s[*shifts_l].compute_at(so, per_channel_at);
    s[*shifts_l].pragma(s[*shifts_l].axis()[0], "dma_copy");
  }
  for (size_t i = 0; i + 1 < stages.size(); ++i) {
    s[stages[i]].compute_at(so, ow_o);
    s[stages[i]].pragma(s[stages[i]].axis()[0], "alu");
  }
  Operator op;
  op.args = {data, kernel, bias, out};
  if (p.requant.per_channel()) op.args = {data, kernel, bias, shifts, out};
  op.func = schedule::lower(s, name, op.args);
  return op;
}

Operator dense_accel(const isa::HwConfig &c, const DenseParams &p, const AccelSchedule &sc,
                     const std::string &name) {
  check_multiple(p.batch, c.batch, "batch", name);
  check_multiple(p.in_features, c.block_in, "in_features", name);
  check_multiple(p.out_features, c.block_out, "out_features", name);
  int64_t NB = p.batch / c.batch, CB = p.in_features / c.block_in,
          OB = p.out_features / c.block_out;
  tir::DataType it = tir::DataType::int_(c.inp_bits), wt = tir::DataType::int_(c.wgt_bits),
                at = tir::DataType::int_(c.acc_bits);
  te::Tensor data = te::placeholder("data", {NB, CB, c.batch, c.block_in}, it);
  te::Tensor weight = te::placeholder("weight", {OB, CB, c.block_out, c.block_in}, wt);
  te::Tensor bias = te::placeholder("bias", {NB, OB, c.batch, c.block_out}, at);
  te::Tensor acc =
      te::reduce_sum("dense", {NB, OB, c.batch, c.block_out}, {{"ic", CB}, {"ic_t", c.block_in}},
                     [&](const auto &v, const auto &r) {
                       return tir::cast(at, (*data)({v[0], r[0], v[2], r[1]})) *
                              tir::cast(at, (*weight)({v[1], r[0], v[3], r[1]}));
                     },
                     {"n", "oc", "b", "oc_t"});
  te::Tensor shifts = te::placeholder("shifts", {NB, OB, c.batch, c.block_out}, at);
  auto stages = requantize(
      acc, p.requant, c.inp_bits,
      [&](const auto &v) {
        return (*bias)({v[0], v[1], v[2], v[3]});
      },
      [&](const auto &v) {
        return (*shifts)({v[0], v[1], v[2], v[3]});
      });
  te::Tensor out = stages.back();

  schedule::Schedule s({out});
  te::Tensor data_l = s.cache_read(data, Scope::kInp, {acc});
  te::Tensor weight_l = s.cache_read(weight, Scope::kWgt, {acc});
  te::Tensor bias_l = s.cache_read(bias, Scope::kAcc, {stages[0]});
  std::optional<te::Tensor> shifts_l;
  if (p.requant.per_channel()) shifts_l = s.cache_read(shifts, Scope::kAcc, {stages[1]});
  s[acc].set_scope(Scope::kAcc);
  for (size_t i = 0; i + 1 < stages.size(); ++i) s[stages[i]].set_scope(Scope::kAcc);

  auto &so = s[out];
  auto ax = so.axis();
  auto [oc_o, oc_i] = so.split(ax[1], sc.tile_oc);
  std::vector<te::IterVar> order;
  if (sc.vthreads > 1) {
    auto [vt, oc_rest] = so.split_nparts(oc_o, sc.vthreads);
    so.bind_vthread(vt);
    order = {vt, oc_rest};
  } else {
    order = {oc_o};
  }
  order.insert(order.end(), {ax[0], oc_i, ax[2], ax[3]});
  so.reorder(order);
  te::IterVar store_at = ax[0];
  so.pragma(oc_i, "dma_copy");

  auto &sd = s[acc];
  sd.compute_at(so, store_at);
  auto da = sd.axis();
  auto dr = sd.reduce_axis();
  auto [ic_o, ic_i] = sd.split(dr[0], sc.tile_ic);
  sd.reorder({ic_o, ic_i, da[0], da[1], da[2], da[3], dr[1]});
  sd.tensorize(da[2], "gemm");
  s[data_l].compute_at(sd, ic_o);
  s[weight_l].compute_at(sd, ic_o);
  s[data_l].pragma(s[data_l].axis()[0], "dma_copy");
  s[weight_l].pragma(s[weight_l].axis()[0], "dma_copy");
  s[bias_l].compute_at(so, store_at);
  s[bias_l].pragma(s[bias_l].axis()[0], "dma_copy");
  if (shifts_l) {
    s[*shifts_l].compute_at(so, store_at);
    s[*shifts_l].pragma(s[*shifts_l].axis()[0], "dma_copy");
  }
  for (size_t i = 0; i + 1 < stages.size(); ++i) {
    s[stages[i]].compute_at(so, store_at);
    s[stages[i]].pragma(s[stages[i]].axis()[0], "alu");
  }
  Operator op;
  op.args = {data, weight, bias, out};
  if (p.requant.per_channel()) op.args = {data, weight, bias, shifts, out};
  op.func = schedule::lower(s, name, op.args);
  return op;
}

}  // namespace vacc::compiler
