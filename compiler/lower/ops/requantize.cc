#include "requantize.h"

#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"
#include "vacc/tir/ops.h"

namespace vacc::lower {

std::vector<te::Tensor> requantize(const te::Tensor &acc, const Requant &q, int out_bits,
                                   const ChannelIndex &bidx, const ChannelIndex &sidx) {
  using tir::Expr;
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

void check_requant_supported(const isa::HwConfig &c, const Requant &q, int64_t out_channels,
                             const std::string &name) {
  if (q.per_channel()) {
    if (static_cast<int64_t>(q.channel_shifts.size()) != out_channels)
      fail(
          "{}: {} per-channel shifts for {} output channels; give one per channel (pad the "
          "padded channels with 0)",
          name, q.channel_shifts.size(), out_channels);
    for (size_t i = 0; i < q.channel_shifts.size(); ++i)
      if (q.channel_shifts[i] < 0 || q.channel_shifts[i] >= c.acc_bits)
        fail("{}: shift of channel {} = {} must lie in [0, {})", name, i, q.channel_shifts[i],
             c.acc_bits);
  } else if (q.shift < 0 || q.shift >= c.acc_bits) {
    fail("{}: shift = {} must lie in [0, {})", name, q.shift, c.acc_bits);
  }
  const int64_t lo = q.lo(c.inp_bits), hi = q.hi(c.inp_bits);
  const int64_t imm = int64_t{1} << (isa::kImmBits - 1);
  for (auto [what, v] : {std::pair{"clip_min", lo}, std::pair{"clip_max", hi}})
    if (v < -imm || v >= imm)
      fail("{}: {} = {} does not fit the ALU's {}-bit immediate", name, what, v, isa::kImmBits);
  if (lo > hi) fail("{}: clip_min = {} is above clip_max = {}", name, lo, hi);
}

double alu_cycles_per_tile(const Requant &q) {
  // reset, bias add, shift, clip low, clip high
  return 1 + 2 + (q.per_channel() ? 2 : 1) + 1 + 1;
}

}  // namespace vacc::lower
