// The GEMM assign extension (extensions.gemm_assign) in the compiler (assign_first_gemms.cc):
// convolutions of several shapes and schedules compiled with it give the C++ reference's
// outputs on fsim; where a tile's first GEMM writes each accumulator once (a 1x1 convolution
// over one input block) no reset is left, and that ALU-bound layer takes fewer perf cycles than
// without the extension. fsim, perf and rtl against the reference with it on: the batch4 cases
// of codegen_accel_test, requant_add_test and pool_test.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "extension_check.h"
#include "layer_kit.h"
#include "program_kit.h"
#include "reference.h"
#include "vacc/lower/lower.h"

namespace vacc {
namespace {

// Resets left: reset GEMMs and ALU multiplies by the immediate 0 (reset_on_alu's form).
size_t resets(const isa::CommandList &l) {
  size_t n = 0;
  for (const auto &cmd : l.commands) {
    if (const auto *g = std::get_if<isa::GemmCommand>(&cmd)) n += g->reset;
    if (const auto *a = std::get_if<isa::AluCommand>(&cmd))
      n += a->op == isa::AluOp::kMul && a->use_imm && a->imm == 0;
  }
  return n;
}

size_t assigns(const isa::CommandList &l) {
  size_t n = 0;
  for (const auto &cmd : l.commands)
    if (const auto *g = std::get_if<isa::GemmCommand>(&cmd)) n += g->assign;
  return n;
}

isa::HwConfig with_assign(bool on) {
  isa::HwConfig c = test::config_named("small");
  c.gemm_assign = on;
  return c;
}

// 1x1 and 3x3 windows, stride 1 and 2, one and two input blocks, every schedule order.
TEST(GemmAssign, ConvolutionsEqualTheReference) {
  const isa::HwConfig c = with_assign(true);
  int layers = 0, assigned = 0;
  for (int shape = 0; shape < 4; ++shape) {
    lower::Conv2dParams p;
    p.kernel_h = p.kernel_w = shape < 2 ? 1 : 3;
    p.pad_h = p.pad_w = p.kernel_h / 2;
    p.stride_h = p.stride_w = shape == 3 ? 2 : 1;
    p.height = p.width = 9;
    p.in_channels = c.block_in * (shape == 1 ? 2 : 1);
    p.out_channels = 2 * c.block_out;
    p.requant = {7, shape % 2 == 0};
    for (const test::Order &order : test::with_resident_orders()) {
      SCOPED_TRACE(fmt::format("shape {} vthreads {} resident {} tails {}", shape, order.vthreads,
                               static_cast<int>(order.resident), order.tails));
      lower::LowerOptions o;
      if (!test::use_order(c, p, order, &o)) continue;
      const lower::LoweredLayer layer = lower::compile_conv2d(c, p, o);
      const auto args = test::random_layer_args(layer.op, 11 + shape);
      EXPECT_EQ(test::run_layer("fsim", c, layer, args).out,
                test::conv2d_reference(c, p, args[0], args[1], args[2]));
      ++layers;
      assigned += assigns(layer.commands) > 0;
    }
  }
  EXPECT_GE(layers, 16);
  EXPECT_GT(assigned, 0);
}

// One input block: every tile's first GEMM is its only one, so no reset is left.
TEST(GemmAssign, OneByOneConvolutionNeedsNoResetAndTakesFewerCycles) {
  const isa::HwConfig without = with_assign(false), with = with_assign(true);
  const lower::Conv2dParams p = test::alu_bound_conv(without);
  const lower::LoweredLayer a = lower::compile_conv2d(without, p);
  const lower::LoweredLayer b = lower::compile_conv2d(with, p);
  EXPECT_GT(resets(a.commands), 0u);
  EXPECT_EQ(assigns(a.commands), 0u);
  EXPECT_EQ(resets(b.commands), 0u);
  EXPECT_GT(assigns(b.commands), 0u);
  test::expect_same_outputs_fewer_cycles(without, with, p, a, b);
}

}  // namespace
}  // namespace vacc
