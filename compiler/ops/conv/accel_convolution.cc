#include "accel_convolution.h"

#include "ops/elementwise/accel_arithmetic.h"
#include "vacc/tir/ops.h"

namespace vacc::lower {

using tir::Expr;

Convolution convolution(const isa::HwConfig &c, const Conv2dParams &p, const te::Tensor &data,
                        const te::Tensor &kernel, const std::string &prefix) {
  const int64_t NB = p.batch / c.batch, CB = p.in_channels / c.block_in,
                OB = p.out_channels / c.block_out;
  // Input blocks each output block reduces over, and (grouped) the first of them for output
  // block `ob`.
  const int64_t IBG = CB / p.groups, OBG = OB / p.groups;
  auto first_in_block = [&](const Expr &ob) -> Expr {
    if (OBG == 1) return ob * tir::make_const(tir::int32(), IBG);
    return ob / tir::make_const(tir::int32(), OBG) * tir::make_const(tir::int32(), IBG);
  };
  const tir::DataType it = tir::DataType::int_(c.inp_bits), at = tir::DataType::int_(c.acc_bits);
  const int64_t PH = p.height + 2 * p.pad_h, PW = p.width + 2 * p.pad_w;
  Convolution out;
  out.pad = te::compute(prefix + "pad", {NB, CB, PH, PW, c.batch, c.block_in},
                        [&](const auto &v) {
                          Expr h = v[2], w = v[3];
                          Expr inside = h >= tir::make_const(tir::int32(), p.pad_h) &&
                                        h < tir::make_const(tir::int32(), p.height + p.pad_h) &&
                                        w >= tir::make_const(tir::int32(), p.pad_w) &&
                                        w < tir::make_const(tir::int32(), p.width + p.pad_w);
                          return tir::select(
                              inside, (*data)({v[0], v[1], h - p.pad_h, w - p.pad_w, v[4], v[5]}),
                              tir::make_const(it, 0));
                        },
                        {"n", "c", "h", "w", "b", "ci"});
  const te::Tensor pad = out.pad;
  out.conv =
      te::reduce_sum(prefix + "conv", {NB, OB, p.out_height(), p.out_width(), c.batch, c.block_out},
                     {{"ic", IBG}, {"kh", p.kernel_h}, {"kw", p.kernel_w}, {"ic_t", c.block_in}},
                     [&](const auto &v, const auto &r) {
                       Expr h = Expr(v[2]) * tir::make_const(tir::int32(), p.stride_h) + r[1];
                       Expr w = Expr(v[3]) * tir::make_const(tir::int32(), p.stride_w) + r[2];
                       Expr ic = p.groups == 1 ? Expr(r[0]) : first_in_block(v[1]) + r[0];
                       return tir::cast(at, (*pad)({v[0], ic, h, w, v[4], r[3]})) *
                              tir::cast(at, (*kernel)({v[1], r[0], r[1], r[2], v[5], r[3]}));
                     },
                     {"n", "oc", "oh", "ow", "b", "oc_t"});
  return out;
}

te::IterVar schedule_convolution(schedule::Schedule &s, const te::Tensor &conv,
                                 schedule::Stage &parent, const te::IterVar &at, int64_t tile_ic) {
  auto &sconv = s[conv];
  sconv.compute_at(parent, at);
  auto ca = sconv.axis();
  auto cr = sconv.reduce_axis();
  auto [ic_o, ic_i] = sconv.split(cr[0], tile_ic);
  sconv.reorder({ca[0], ic_o, cr[1], cr[2], ic_i, ca[1], ca[2], ca[3], ca[4], ca[5], cr[3]});
  sconv.tensorize(ca[4], "gemm");
  return ic_o;
}

ResidualStages residual_stages(const isa::HwConfig &c, const Residual &r,
                               std::vector<te::Tensor> *stages, const std::vector<int64_t> &shape) {
  const tir::DataType it = tir::DataType::int_(c.inp_bits), wt = tir::DataType::int_(c.wgt_bits),
                      at = tir::DataType::int_(c.acc_bits);
  ResidualStages out;
  out.skip = te::placeholder("skip", shape, it);
  out.skip_weight = te::placeholder("skip_weight", {1, c.block_out, c.block_in}, wt);
  const te::Tensor skip = out.skip, skip_weight = out.skip_weight;
  out.skip_sum =
      te::reduce_sum("skip_sum", shape, {{"one", 1}, {"ci", c.block_in}},
                     [&](const auto &v, const auto &red) {
                       return tir::cast(at, (*skip)({v[0], v[1], v[2], v[3], v[4], red[1]})) *
                              tir::cast(at, (*skip_weight)({red[0], v[5], red[1]}));
                     },
                     {"n", "oc", "oh", "ow", "b", "oc_t"});
  stages->pop_back();  // requantize's narrowing
  // The skip's sum first: its GEMM then runs before the convolution's (schedules visit
  // operands in order), and the tile's ALU work stays one run after the GEMMs, which lets
  // the virtual threads interleave as without a residual.
  const AddStages add =
      add_stages(out.skip_sum, r.lshift_skip - weight_shift(r.lshift_skip), stages->back(),
                 r.lshift_out, r.rshift, r.clip_min, r.clip_max, c);
  out.acc = add.acc;
  out.out = add.out;
  return out;
}

void schedule_residual(schedule::Schedule &s, const ResidualStages &r,
                       const te::Tensor &requant_last, schedule::Stage &so, const te::IterVar &tile,
                       const te::IterVar &weight_at) {
  // The requantization's last stage is no longer the output's: it stays in ACC too.
  s[requant_last].set_scope(tir::Scope::kAcc);
  s[requant_last].compute_at(so, tile);
  s[requant_last].pragma(s[requant_last].axis()[0], "alu");
  te::Tensor skip_l = s.cache_read(r.skip, tir::Scope::kInp, {r.skip_sum});
  te::Tensor skip_w_l = s.cache_read(r.skip_weight, tir::Scope::kWgt, {r.skip_sum});
  schedule_through_gemm(s, r.skip_sum, skip_l, so, tile);
  s[skip_w_l].compute_at(so, weight_at);
  s[skip_w_l].pragma(s[skip_w_l].axis()[0], "dma_copy");
  for (const te::Tensor &stage : r.acc) {
    s[stage].set_scope(tir::Scope::kAcc);
    s[stage].compute_at(so, tile);
    s[stage].pragma(s[stage].axis()[0], "alu");
  }
}

}  // namespace vacc::lower
