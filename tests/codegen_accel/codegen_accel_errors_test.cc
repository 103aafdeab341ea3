// One case per diagnostic of accelerator code generation and its operators: each must be a
// vacc::Error whose message names the layer and the field, scratchpad or limit at fault.
#include <gtest/gtest.h>

#include "program_kit.h"
#include "vacc/lower/lower.h"
#include "vacc/support/error.h"

namespace vacc {
namespace {

using lower::LowerOptions;

using test::error_of;

lower::Conv2dParams small_conv() {
  lower::Conv2dParams p;
  p.in_channels = p.out_channels = 16;
  p.height = p.width = 8;
  return p;
}

TEST(CodegenAccelErrors, TileThatCannotFit) {
  // small: 8 KiB of weights = 128 tiles; a 13x13 kernel needs 169 for one channel block.
  isa::HwConfig c = test::config_named("small");
  lower::Conv2dParams p = small_conv();
  p.in_channels = p.out_channels = 8;
  p.height = p.width = 16;
  p.kernel_h = p.kernel_w = 13;
  p.pad_h = p.pad_w = 6;
  std::string msg = error_of([&] { lower::compile_conv2d(c, p, {}, "big_kernel"); });
  EXPECT_NE(msg.find("big_kernel: no tile fits"), std::string::npos) << msg;
  EXPECT_NE(msg.find("wgt scratchpad holds 128"), std::string::npos) << msg;
  EXPECT_NE(msg.find("buffers.wgt_kib"), std::string::npos) << msg;
}

TEST(CodegenAccelErrors, GroupsThatDoNotDivideTheBlocks) {
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p = small_conv();
  p.in_channels = p.out_channels = 48;
  p.groups = 2;
  std::string msg = error_of([&] { lower::compile_conv2d(c, p, {}, "grouped"); });
  EXPECT_NE(msg.find("grouped: groups = 2 must divide both the 3 input and the 3 output channel "
                     "blocks"),
            std::string::npos)
      << msg;
}

TEST(CodegenAccelErrors, GroupedTileOfSeveralOutputBlocks) {
  // Two output blocks per slice: a tile holds one (its input blocks follow from a division).
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p = small_conv();
  p.in_channels = p.out_channels = 64;
  p.groups = 2;
  LowerOptions o;
  o.schedule = lower::AccelSchedule{4, 4, 2, 1, 1};
  std::string msg = error_of([&] { lower::compile_conv2d(c, p, o, "g2"); });
  EXPECT_NE(msg.find("g2: tile_oc = 2: a grouped convolution with 2 output blocks per group tiles "
                     "one output block at a time"),
            std::string::npos)
      << msg;
}

TEST(CodegenAccelErrors, UnsupportedPadding) {
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p = small_conv();
  p.kernel_h = p.kernel_w = 3;
  p.pad_h = 20;
  std::string msg = error_of([&] { lower::compile_conv2d(c, p, {}, "wide_pad"); });
  EXPECT_NE(msg.find("wide_pad: pad_h = 20 exceeds the DMA's padding limit of 15"),
            std::string::npos)
      << msg;
}

TEST(CodegenAccelErrors, UnsupportedChannelCount) {
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p = small_conv();
  p.in_channels = 24;
  std::string msg = error_of([&] { lower::compile_conv2d(c, p, {}, "odd"); });
  EXPECT_NE(msg.find("odd: in_channels = 24 is not a multiple of gemm.block_in = 16"),
            std::string::npos)
      << msg;
}

TEST(CodegenAccelErrors, DmaFieldBeyondItsWidth) {
  // Past the operator checks, codegen itself names the DMA, the field and the iteration.
  isa::HwConfig c = test::config_named("default");
  lower::Conv2dParams p = small_conv();
  p.kernel_h = p.kernel_w = 19;
  p.pad_h = p.pad_w = 17;
  p.height = p.width = 4;
  lower::AccelSchedule s;
  s.tile_h = s.tile_w = 1;
  s.vthreads = 1;
  lower::Operator op = lower::define(c, p, s, "pad17");
  tir::Func f = lower::lower_loops(op.func, c);
  std::string msg = error_of([&] { lower::generate_commands(f, c); });
  EXPECT_NE(msg.find("pad17: dma.load inp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("field pad_top = 17 does not fit its 4 bits"), std::string::npos) << msg;
  EXPECT_NE(msg.find("oh.o=0"), std::string::npos) << msg;
}

TEST(CodegenAccelErrors, ProgramBeyondTheInstructionLimit) {
  isa::HwConfig c = test::config_named("default");
  LowerOptions o;
  o.commands.max_insns = 5;
  std::string msg =
      error_of([&] { lower::compile_conv2d(c, small_conv(), o, "too_long"); });
  EXPECT_NE(msg.find("too_long: the program needs"), std::string::npos) << msg;
  EXPECT_NE(msg.find("more than the limit of 5"), std::string::npos) << msg;
}

TEST(CodegenAccelErrors, ProgramBeyondTheMicroOpLimit) {
  isa::HwConfig c = test::config_named("default");
  LowerOptions o;
  o.commands.max_uops = 3;
  std::string msg =
      error_of([&] { lower::compile_conv2d(c, small_conv(), o, "many_uops"); });
  EXPECT_NE(msg.find("many_uops: the program needs"), std::string::npos) << msg;
  EXPECT_NE(msg.find("distinct micro-ops, more than the micro-op pool's 3"), std::string::npos)
      << msg;
}

TEST(CodegenAccelErrors, CorruptSerializedCommandList) {
  std::vector<uint8_t> bytes = {'n', 'o', 't', ' ', 'a', ' ', 'l', 'i', 's', 't', 0, 0};
  std::string msg = error_of([&] { isa::deserialize(bytes); });
  EXPECT_NE(msg.find("bad magic"), std::string::npos) << msg;
}

TEST(CodegenAccelErrors, TruncatedSerializedCommandList) {
  isa::HwConfig c = test::config_named("small");
  auto layer = lower::compile_conv2d(c, small_conv() /* 16 ch = 2 blocks */);
  std::vector<uint8_t> bytes = isa::serialize(layer.commands);
  bytes.resize(bytes.size() - 3);
  std::string msg = error_of([&] { isa::deserialize(bytes); });
  EXPECT_NE(msg.find("command list: truncated"), std::string::npos) << msg;
}

// A command count past the bytes left is refused before anything is reserved for it (the
// package fuzzer's input reserved 3 GiB for a count of 2^32 - 1 here).
TEST(CodegenAccelErrors, CommandCountPastTheListsBytes) {
  std::vector<uint8_t> bytes = isa::serialize(isa::CommandList{});
  ASSERT_GE(bytes.size(), 4u);
  std::fill(bytes.end() - 4, bytes.end(), uint8_t{0xff});  // the last field: the command count
  std::string msg = error_of([&] { isa::deserialize(bytes); });
  EXPECT_NE(msg.find("command list: truncated at byte"), std::string::npos) << msg;
  EXPECT_NE(msg.find("needs 4294967295 more"), std::string::npos) << msg;
}

}  // namespace
}  // namespace vacc
