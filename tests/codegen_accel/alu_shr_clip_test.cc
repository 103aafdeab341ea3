// The ALU's SHR_CLIP extension (extensions.alu_shr_clip) in the compiler: a requantization by
// per-channel shifts ends in one SHR_CLIP (the shift by the channel's vector and the clip to the
// output range) where the config has it. The same layers compiled without and with it give the
// C++ reference's outputs on fsim; the one with it has one ALU instruction fewer per
// requantization and, where the layer is ALU-bound, takes fewer perf cycles. Where something
// comes between the shift and the clip (a QDQ model's multiplier) or the shift is one immediate,
// nothing changes. fsim and rtl with it on: the batch4 cases of codegen_accel_test,
// requant_add_test and pool_test.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "extension_check.h"
#include "layer_kit.h"
#include "program_kit.h"
#include "reference.h"
#include "vacc/lower/host_layout.h"
#include "vacc/lower/lower.h"

namespace vacc {
namespace {

struct Pair {
  isa::HwConfig without, with;
};

// small with CLIP and HOLD (as the default has them), without and with SHR_CLIP.
Pair configs() {
  Pair p{test::config_named("small"), test::config_named("small")};
  for (isa::HwConfig *c : {&p.without, &p.with}) c->alu_clip = c->alu_hold = true;
  p.with.alu_shr_clip = true;
  return p;
}

int64_t wrap32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}

// The accumulators requantized by channel: (acc + bias) >> shift[o], clipped, narrowed.
// `channel(i)` is the output channel of element i of the output's layout.
std::vector<int64_t> requantized(std::vector<int64_t> acc, const lower::Requant &q,
                                 const std::function<int64_t(int64_t)> &channel) {
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t s = q.channel_shifts[channel(static_cast<int64_t>(i))];
    acc[i] = static_cast<int8_t>(std::min(std::max(wrap32(acc[i]) >> s, q.lo(8)), q.hi(8)));
  }
  return acc;
}

// The layer's arguments: data, weights, bias (random) and the shifts as the runtime packs them.
std::vector<std::vector<int64_t>> args_for(const isa::HwConfig &c, const lower::LoweredLayer &l,
                                           int64_t batch, int64_t channels,
                                           const lower::Requant &q) {
  std::vector<std::vector<int64_t>> args;
  args.push_back(test::random_values(l.op.args[0]->buffer->elems(), -128, 127, 3));
  args.push_back(test::random_values(l.op.args[1]->buffer->elems(), -128, 127, 4));
  args.push_back(test::random_values(l.op.args[2]->buffer->elems(), -3000, 3000, 5));
  args.push_back(lower::pack_bias(c, batch, channels, q.channel_shifts));
  args.emplace_back(l.op.args[4]->buffer->elems(), test::kPoison);
  return args;
}

// Both compilations: each SHR of `without` by the shifts vector and the CLIP after it are one
// SHR_CLIP in `with`, nothing else changes; returns the perf cycles of each after checking both
// outputs.
std::pair<uint64_t, uint64_t> compare(const Pair &c, const lower::LoweredLayer &without,
                                      const lower::LoweredLayer &with,
                                      const std::vector<std::vector<int64_t>> &args,
                                      const std::vector<int64_t> &want) {
  return test::expect_fused(c.without, c.with, without, with, isa::AluOp::kShrClip,
                            {isa::AluOp::kShr, isa::AluOp::kClip}, args, want);
}

lower::Requant per_channel(int64_t channels, bool relu) {
  lower::Requant q{7, relu};
  for (int64_t o = 0; o < channels; ++o) q.channel_shifts.push_back(3 + o % 9);
  if (!relu) {
    q.clip_min = -90;
    q.clip_max = 100;
  }
  return q;
}

// A 1x1 convolution of one input block: one GEMM cycle per output tile against several of
// requantization, so the layer is ALU-bound and SHR_CLIP saves cycles.
TEST(AluShrClip, ConvolutionSameOutputsFewerCycles) {
  const Pair c = configs();
  for (bool relu : {false, true}) {
    SCOPED_TRACE(relu ? "relu" : "clip bounds");
    lower::Conv2dParams p = test::alu_bound_conv(c.without);
    p.requant = per_channel(p.out_channels, relu);
    const lower::LoweredLayer without = lower::compile_conv2d(c.without, p, {});
    const lower::LoweredLayer with = lower::compile_conv2d(c.with, p, {});
    const auto args = args_for(c.with, with, p.batch, p.out_channels, p.requant);
    const int64_t B = c.with.batch, BO = c.with.block_out, OB = p.out_channels / BO;
    const int64_t plane = p.out_height() * p.out_width();
    const auto want =
        requantized(test::conv2d_accumulators(c.without, p, args[0], args[1], args[2]), p.requant,
                    [&](int64_t i) { return (i / (B * BO) / plane) % OB * BO + i % BO; });
    const auto [before, after] = compare(c, without, with, args, want);
    EXPECT_LT(after, before);
  }
}

TEST(AluShrClip, DenseSameOutputs) {
  const Pair c = configs();
  lower::DenseParams p;
  p.batch = 3;
  p.in_features = 4 * c.without.block_in;
  p.out_features = 3 * c.without.block_out;
  p.requant = per_channel(p.out_features, true);
  const lower::LoweredLayer without = lower::compile_dense(c.without, p, {});
  const lower::LoweredLayer with = lower::compile_dense(c.with, p, {});
  const auto args = args_for(c.with, with, c.with.batch, p.out_features, p.requant);
  const int64_t BO = c.with.block_out, OB = p.out_features / BO;
  const auto want =
      requantized(test::dense_accumulators(c.without, p, args[0], args[1], args[2]), p.requant,
                  [&](int64_t i) { return (i / (c.with.batch * BO)) % OB * BO + i % BO; });
  compare(c, without, with, args, want);
}

// One immediate shift (no shifts vector), or a multiplier between the shift and the clip: the
// commands are those of a config without the extension.
TEST(AluShrClip, OtherRequantizationsUnchanged) {
  const Pair c = configs();
  lower::Conv2dParams p = test::alu_bound_conv(c.without);
  lower::Requant multiplied = per_channel(p.out_channels, false);
  for (int64_t o = 0; o < p.out_channels; ++o) multiplied.multipliers.push_back(900 + 37 * o);
  multiplied.pre_clip = 127;
  multiplied.post_shift = 10;
  for (const lower::Requant &q : {lower::Requant{6, true}, multiplied}) {
    p.requant = q;
    const lower::LoweredLayer without = lower::compile_conv2d(c.without, p, {});
    const lower::LoweredLayer with = lower::compile_conv2d(c.with, p, {});
    EXPECT_EQ(test::count_op(with.commands, isa::AluOp::kShrClip), 0u);
    EXPECT_EQ(with.commands.commands, without.commands.commands);
  }
}

}  // namespace
}  // namespace vacc
