#include "accel_convolution.h"

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

}  // namespace vacc::lower
