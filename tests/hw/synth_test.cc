// Synthesis plausibility of the small config (Yosys synth_xilinx, xc7): "it finished" is not
// enough, since Yosys can silently drop logic. The MAC array (BATCH*BLOCK_IN*BLOCK_OUT 8-bit
// multipliers) must appear as DSPs, the scratchpads as block RAM holding at least their
// capacity, and the control as flip-flops and LUTs. Slow (minutes): ctest label "slow".
// The default config, packed (two int8 products per DSP48E1), must fit its Zynq-7020 with
// margin: DSP <= 90 %, LUT <= 85 %, BRAM no higher than before packing (92.5 %).
#include <gtest/gtest.h>

#include "vacc/hw/dsp_packing.h"
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
  // gemm.dsp_packing: auto leaves it unpacked; its estimate is close to what Yosys maps.
  EXPECT_FALSE(r.dsp_packed);
  EXPECT_NEAR(r.dsps, plan_dsp_packing(config).dsps_unpacked, 8);
}

TEST(Synth, PackedDefaultConfigFitsItsZynq7020WithMargin) {
  const isa::HwConfig config = isa::load_config(VACC_TEST_CONFIG_DIR "/default.yaml");
  SynthOptions options;
  options.cache_dir = VACC_TEST_SYNTH_CACHE;
  const SynthReport r = synthesize(config, options);
  const PartFit fit = check_fit(r, *find_part("xc7z020"));
  std::printf("%s", report_text(r, fit).c_str());
  ASSERT_TRUE(r.dsp_packed) << r.dsp_packing_reason;
  const int64_t macs = config.peak_macs_per_cycle();
  // Half a DSP per MAC (two products each) plus the ALU's multipliers, and not fewer: a MAC
  // array lost by synthesis would show as too few.
  EXPECT_GE(r.dsps, macs / 2) << "the MAC array is missing from the netlist";
  EXPECT_LT(r.dsps, macs) << "the products are not packed";
  EXPECT_NEAR(r.dsps, plan_dsp_packing(config).dsps_packed, 8);
  // The adder trees move to the fabric: many LUTs per MAC.
  EXPECT_GE(r.luts, 20 * macs);
  EXPECT_GE(r.bram_bits, r.scratchpad_bits);
  EXPECT_TRUE(fit.fits);
  EXPECT_LE(fit.dsp_pct, 90.0);
  EXPECT_LE(fit.lut_pct, 85.0);
  EXPECT_LE(fit.bram_pct, 92.5);
}

}  // namespace
}  // namespace vacc::hw
