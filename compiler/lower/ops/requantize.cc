#include "requantize.h"

#include "clip.h"
#include "vacc/isa/encoding.h"
#include "vacc/isa/insn.h"
#include "vacc/support/error.h"
#include "vacc/tir/ops.h"

namespace vacc::lower {

std::vector<te::Tensor> requantize(const te::Tensor &acc, const Requant &q, const isa::HwConfig &c,
                                   const ChannelIndex &bidx, const ChannelIndex &sidx,
                                   const ChannelIndex &midx) {
  using tir::Expr;
  const auto &shape = acc->shape();
  tir::DataType at = acc->dtype();
  std::vector<std::string> names;
  for (const auto &ax : acc->axes) names.push_back(ax->var->name);
  auto idx = [](const std::vector<tir::Var> &v) { return std::vector<Expr>(v.begin(), v.end()); };
  te::Tensor with_bias = te::compute(
      "bias_add", shape, [&](const auto &v) { return (*acc)(idx(v)) + bidx(v); }, names);
  const int out_bits = c.out_bits();
  const bool shr_clip = fused_shr_clip(q, c);
  te::Tensor shifted = te::compute(
      shr_clip ? "shift_clip" : "shift", shape,
      [&](const auto &v) {
        const Expr x =
            (*with_bias)(idx(v)) >> (q.per_channel() ? sidx(v) : tir::make_const(at, q.shift));
        if (!shr_clip) return x;
        return tir::min(tir::max(x, tir::make_const(at, q.lo(out_bits))),
                        tir::make_const(at, q.hi(out_bits)));
      },
      names);
  std::vector<te::Tensor> stages = {with_bias, shifted};
  if (q.multiplied()) {
    auto step = [&](const char *stage, const std::function<Expr(Expr, const std::vector<tir::Var> &)>
                                           &f) {
      const te::Tensor prev = stages.back();
      stages.push_back(te::compute(
          stage, shape, [&](const auto &v) { return f((*prev)(idx(v)), v); }, names));
    };
    const Expr pre = tir::make_const(at, q.pre_clip);
    step("pre_clip_lo", [&](Expr x, const auto &) { return tir::max(x, tir::make_const(at, -q.pre_clip)); });
    step("pre_clip_hi", [&](Expr x, const auto &) { return tir::min(x, pre); });
    VACC_CHECK(stages.size() == kMultiplyStage);
    step("multiply", [&](Expr x, const auto &v) { return x * midx(v); });
    step("post_shift", [&](Expr x, const auto &) { return x >> tir::make_const(at, q.post_shift); });
    if (q.zero_point)
      step("zero_point", [&](Expr x, const auto &) { return x + tir::make_const(at, q.zero_point); });
  }
  for (const ClipStep &step :
       shr_clip ? std::vector<ClipStep>{} : clip_steps(c, q.lo(out_bits), q.hi(out_bits), at)) {
    const te::Tensor prev = stages.back();
    stages.push_back(te::compute(
        step.name, shape, [&](const auto &v) { return step.value((*prev)(idx(v))); }, names));
  }
  const te::Tensor clipped = stages.back();
  stages.push_back(te::compute(
      "out", shape,
      [&](const auto &v) { return tir::cast(tir::DataType::int_(out_bits), (*clipped)(idx(v))); },
      names));
  return stages;
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
  if (q.multiplied()) {
    if (static_cast<int64_t>(q.multipliers.size()) != out_channels)
      fail("{}: {} multipliers for {} output channels; give one per channel", name,
           q.multipliers.size(), out_channels);
    if (q.post_shift < 0 || q.post_shift >= c.acc_bits)
      fail("{}: post_shift = {} must lie in [0, {})", name, q.post_shift, c.acc_bits);
    for (auto [what, v] : {std::pair{"pre_clip", q.pre_clip}, std::pair{"zero_point", q.zero_point}})
      if (v < -imm || v >= imm)
        fail("{}: {} = {} does not fit the ALU's {}-bit immediate", name, what, v, isa::kImmBits);
    for (size_t i = 0; i < q.multipliers.size(); ++i)
      if (q.multipliers[i] < 0 || q.multipliers[i] * q.pre_clip >= (int64_t{1} << (c.acc_bits - 1)))
        fail("{}: multiplier of channel {} = {} times pre_clip {} overflows the {}-bit accumulator",
             name, i, q.multipliers[i], q.pre_clip, c.acc_bits);
  }
  for (auto [what, v] : {std::pair{"clip_min", lo}, std::pair{"clip_max", hi}})
    if (v < -imm || v >= imm)
      fail("{}: {} = {} does not fit the ALU's {}-bit immediate", name, what, v, isa::kImmBits);
  if (lo > hi) fail("{}: clip_min = {} is above clip_max = {}", name, lo, hi);
}

bool fused_shr_clip(const Requant &q, const isa::HwConfig &c) {
  return c.alu_shr_clip && q.per_channel() && !q.multiplied() &&
         isa::clip_bound_fits(q.lo(c.out_bits())) && isa::clip_bound_fits(q.hi(c.out_bits()));
}

double alu_cycles_per_tile(const Requant &q, const isa::HwConfig &c) {
  // reset, bias add, shift, [pre clip low and high, multiply, post shift, zero point,] clip
  // (one CLIP, or low and high). Each vector operand is one channel block's ACC vector, the
  // same for every tile of an instruction: with extensions.alu_hold read once, so one cycle.
  const double vector = c.alu_hold ? 1 : 2;
  const double multiply = q.multiplied() ? 1 + 1 + vector + 1 + (q.zero_point ? 1 : 0) : 0;
  if (fused_shr_clip(q, c)) return 1 + vector + vector;  // reset, bias add, SHR_CLIP
  const double clip = fused_clip(c, q.lo(c.out_bits()), q.hi(c.out_bits())) ? 1 : 2;
  return 1 + vector + (q.per_channel() ? vector : 1) + multiply + clip;
}

int64_t channel_vectors(const Requant &q) {
  return 1 + (q.per_channel() ? 1 : 0) + (q.multiplied() ? 1 : 0);
}

}  // namespace vacc::lower
