// The ALU's CLIP extension (extensions.alu_clip) in the compiler: the same layers compiled for a
// config without and with it give the same outputs (both equal to the C++ reference on fsim),
// the one with it clips in one CLIP where the other runs MAX then MIN, and an ALU-bound layer
// takes fewer cycles on perf. fsim and rtl against the reference with the extension on: the
// batch4 cases of codegen_accel_test, requant_add_test and pool_test.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "extension_check.h"
#include "layer_kit.h"
#include "program_kit.h"
#include "reference.h"
#include "vacc/lower/lower.h"

namespace vacc {
namespace {

struct Pair {
  isa::HwConfig without, with;
};

Pair configs() {
  Pair p{test::config_named("small"), test::config_named("small")};
  p.with.alu_clip = true;
  return p;
}

// Both compilations of a layer: each clip of `without` (a MAX then a MIN) is one CLIP in
// `with`, nothing else changes; returns the perf cycles of each after checking both outputs.
std::pair<uint64_t, uint64_t> compare(const Pair &c, const lower::LoweredLayer &without,
                                      const lower::LoweredLayer &with,
                                      const std::vector<std::vector<int64_t>> &args,
                                      const std::vector<int64_t> &want) {
  return test::expect_fused(c.without, c.with, without, with, isa::AluOp::kClip,
                            {isa::AluOp::kMax, isa::AluOp::kMin}, args, want);
}

// 1x1 convolutions of one input block: two ALU cycles of clip in seven (ReLU or not) per
// output tile against one GEMM cycle, so the layer is ALU-bound and CLIP saves cycles.
TEST(AluClip, ConvolutionsSameOutputsOneClipFewerCycles) {
  const Pair c = configs();
  for (bool relu : {false, true}) {
    SCOPED_TRACE(relu ? "relu" : "no relu");
    lower::Conv2dParams p;
    p.batch = 1;
    p.kernel_h = p.kernel_w = 1;
    p.stride_h = p.stride_w = 1;
    p.pad_h = p.pad_w = 0;
    p.height = p.width = 12;
    p.in_channels = c.without.block_in;
    p.out_channels = 4 * c.without.block_out;
    p.requant = {6, relu};
    const lower::LoweredLayer without = lower::compile_conv2d(c.without, p, {});
    const lower::LoweredLayer with = lower::compile_conv2d(c.with, p, {});
    const auto args = test::random_layer_args(with.op, relu ? 5 : 9);
    const auto want = test::conv2d_reference(c.without, p, args[0], args[1], args[2]);
    const auto [before, after] = compare(c, without, with, args, want);
    EXPECT_LT(after, before);
  }
}

TEST(AluClip, DenseSameOutputsOneClip) {
  const Pair c = configs();
  lower::DenseParams p;
  p.batch = 3;
  p.in_features = 4 * c.without.block_in;
  p.out_features = 3 * c.without.block_out;
  p.requant = {8, true};
  const lower::LoweredLayer without = lower::compile_dense(c.without, p, {});
  const lower::LoweredLayer with = lower::compile_dense(c.with, p, {});
  const auto args = test::random_layer_args(with.op, 21);
  const auto want = test::dense_reference(c.without, p, args[0], args[1], args[2]);
  compare(c, without, with, args, want);
}

}  // namespace
}  // namespace vacc
