// The ALU's HOLD extension (extensions.alu_hold) in the compiler. Its cost model
// (lower::alu_cycles_per_tile) counts each requantization vector operand (bias, per-channel
// shift, multiplier) one cycle per tile, which holds only if every such ALU instruction the
// lowering writes has the held form (isa::alu_holds_operand): checked here over convolution
// shapes, requantization kinds and schedules; and a layer compiled with HOLD gives the same
// outputs as without it (both equal to the C++ reference on fsim) in fewer perf cycles.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "extension_check.h"
#include "layer_kit.h"
#include "program_kit.h"
#include "reference.h"
#include "vacc/isa/insn.h"
#include "vacc/lower/lower.h"

namespace vacc {
namespace {

// The ALU commands of `l` that read a vector operand, and how many of them are held.
std::pair<int, int> vector_alus(const isa::HwConfig &c, const isa::CommandList &l) {
  int vectors = 0, held = 0;
  for (const auto &cmd : l.commands)
    if (const auto *a = std::get_if<isa::AluCommand>(&cmd); a && !a->use_imm) {
      ++vectors;
      held += isa::alu_holds_operand(c, a->use_imm,
                                     static_cast<uint32_t>(l.kernels[a->kernel].size()), a->src);
    }
  return {vectors, held};
}

lower::Requant requant_of_kind(int kind, int64_t out_channels) {
  lower::Requant q{7, kind != 1};
  if (kind >= 1)
    for (int64_t o = 0; o < out_channels; ++o) q.channel_shifts.push_back(3 + o % 9);
  if (kind == 2) {
    for (int64_t o = 0; o < out_channels; ++o) q.multipliers.push_back(900 + 37 * o);
    q.pre_clip = 127;
    q.post_shift = 10;
    q.zero_point = 3;
  }
  return q;
}

class OnConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(OnConfig, EveryRequantizationVectorOperandIsHeld) {
  isa::HwConfig c = test::config_named(GetParam());
  c.alu_hold = true;
  int layers = 0;
  // 1x1, 3x3, 3x3 stride 2, depthwise 3x3; shift only, per-channel shifts, QDQ multipliers.
  for (int shape = 0; shape < 4; ++shape)
    for (int kind = 0; kind < 3; ++kind) {
      lower::Conv2dParams p;
      p.batch = c.batch;
      p.kernel_h = p.kernel_w = shape == 0 ? 1 : 3;
      p.pad_h = p.pad_w = p.kernel_h / 2;
      p.stride_h = p.stride_w = shape == 2 ? 2 : 1;
      p.height = p.width = 9;
      p.in_channels = c.block_in * (shape == 3 ? 2 : 1);
      p.out_channels = shape == 3 ? p.in_channels : 2 * c.block_out;
      if (shape == 3) p.groups = p.out_channels / c.block_out;
      if (shape == 3 && c.block_in != c.block_out) continue;  // depthwise needs square blocks
      p.requant = requant_of_kind(kind, p.out_channels);
      for (const test::Order &order : test::with_resident_orders()) {
        SCOPED_TRACE(fmt::format("shape {} requant {} vthreads {} resident {} tails {}", shape,
                                 kind, order.vthreads, static_cast<int>(order.resident),
                                 order.tails));
        lower::LowerOptions o;
        if (!test::use_order(c, p, order, &o)) continue;
        const lower::LoweredLayer layer = lower::compile_conv2d(c, p, o);
        const auto [vectors, held] = vector_alus(c, layer.commands);
        EXPECT_GT(vectors, 0);
        EXPECT_EQ(held, vectors);
        ++layers;
      }
    }
  EXPECT_GE(layers, 24);
  lower::DenseParams d;
  d.batch = 2 * c.batch;
  d.in_features = 3 * c.block_in;
  d.out_features = 2 * c.block_out;
  for (int kind = 0; kind < 3; ++kind) {
    d.requant = requant_of_kind(kind, d.out_features);
    const auto [vectors, held] = vector_alus(c, lower::compile_dense(c, d).commands);
    EXPECT_GT(vectors, 0);
    EXPECT_EQ(held, vectors) << "dense, requant " << kind;
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, OnConfig, ::testing::Values("small", "default"));

// A 1x1 convolution of one input block is ALU-bound (one GEMM cycle per output tile against
// several of requantization), so holding its bias saves cycles; the outputs do not change.
TEST(AluHold, ConvolutionSameOutputsFewerCycles) {
  isa::HwConfig without = test::config_named("small"), with = without;
  without.alu_hold = false;
  with.alu_hold = true;
  const lower::Conv2dParams p = test::alu_bound_conv(without);
  const lower::LoweredLayer a = lower::compile_conv2d(without, p);
  const lower::LoweredLayer b = lower::compile_conv2d(with, p);
  EXPECT_EQ(vector_alus(without, a.commands).second, 0);
  EXPECT_GT(vector_alus(with, b.commands).second, 0);
  test::expect_same_outputs_fewer_cycles(without, with, p, a, b);
}

}  // namespace
}  // namespace vacc
