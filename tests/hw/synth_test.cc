// Synthesis plausibility of the small config (Yosys synth_xilinx, xc7): "it finished" is not
// enough, since Yosys can silently drop logic. The MAC array (BATCH*BLOCK_IN*BLOCK_OUT 8-bit
// multipliers) must appear as DSPs, the scratchpads as block RAM holding at least their
// capacity, and the control as flip-flops and LUTs. Slow (minutes): ctest label "slow".
#include <gtest/gtest.h>

#include "vacc/hw/parts.h"
#include "vacc/hw/synth.h"
#include "vacc/isa/config.h"

namespace vacc::hw {
namespace {

TEST(Synth, SmallConfigHasPlausibleResources) {
  const isa::HwConfig config = isa::load_config(VACC_TEST_CONFIG_DIR "/small.yaml");
  SynthOptions options;
  options.cache_dir = VACC_TEST_SYNTH_CACHE;
  const SynthReport r = synthesize(config, options);
  std::printf("%s", report_text(r, check_fit(r, *find_part("xc7z020"))).c_str());
  const int64_t macs = config.peak_macs_per_cycle();
  // Each int8 x int8 product maps to one DSP48E1 (the ALU's 32-bit multipliers add more).
  EXPECT_GE(r.dsps, macs) << "the MAC array is missing from the netlist";
  EXPECT_LE(r.dsps, 4 * macs);
  // Adder trees and control: far more LUTs than MACs, and registers.
  EXPECT_GE(r.luts, 20 * macs);
  EXPECT_GE(r.ffs, 1000);
  // Scratchpads: kept as block RAM, at least as many bits as the config's buffers.
  EXPECT_GE(r.bram_bits, r.scratchpad_bits);
  EXPECT_GT(r.ramb36 + r.ramb18, 0);
  // The small config is meant for a Zynq-7020 board.
  EXPECT_TRUE(check_fit(r, *find_part("xc7z020")).fits);
}

}  // namespace
}  // namespace vacc::hw
