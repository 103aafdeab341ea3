// Which configs share one RTL model (the generated package decides: memory timing, clock,
// name and FPGA part do not change the RTL; every hardware parameter does), what else the
// cache key holds, and that the model kit embedded in vacc is hw/rtl as it is on disk.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "model_key.h"
#include "model_kit.h"
#include "vacc/isa/config.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/support/error.h"

namespace vacc::sim {
namespace {

isa::HwConfig tiny() {
  return isa::load_config(std::string(VACC_ON_DEMAND_CONFIGS) + "/tiny.yaml");
}

TEST(RtlModelKey, TimingClockNameAndPartShareTheModel) {
  const isa::HwConfig base = tiny();
  const std::vector<std::function<void(isa::HwConfig &)>> same = {
      [](isa::HwConfig &c) { c.mem_latency_cycles = 300; },
      [](isa::HwConfig &c) { c.mem_bytes_per_cycle = 1; },
      [](isa::HwConfig &c) { c.clock_mhz = 333; },
      [](isa::HwConfig &c) { c.name = "renamed"; },
      [](isa::HwConfig &c) { c.source = "/elsewhere/renamed.yaml"; },
      [](isa::HwConfig &c) { c.fpga_part = "xcu250-figd2104-2L-e"; },
  };
  for (size_t i = 0; i < same.size(); ++i) {
    isa::HwConfig c = base;
    same[i](c);
    EXPECT_EQ(rtl_hardware_text(c), rtl_hardware_text(base)) << "change " << i;
  }
}

TEST(RtlModelKey, EveryHardwareParameterChangesTheModel) {
  const isa::HwConfig base = tiny();
  const std::vector<std::function<void(isa::HwConfig &)>> other = {
      [](isa::HwConfig &c) { c.batch = 2; },
      [](isa::HwConfig &c) { c.block_in = 8; },
      [](isa::HwConfig &c) { c.block_out = 8; },
      [](isa::HwConfig &c) { c.acc_bits = 16; },
      [](isa::HwConfig &c) { c.uop_kib = 4; },
      [](isa::HwConfig &c) { c.inp_kib = 4; },
      [](isa::HwConfig &c) { c.wgt_kib = 8; },
      [](isa::HwConfig &c) { c.acc_kib = 8; },
      [](isa::HwConfig &c) { c.bus_bits = 128; },
      [](isa::HwConfig &c) { c.insn_queue_depth = 16; },
      [](isa::HwConfig &c) { c.token_queue_depth = 64; },
  };
  for (size_t i = 0; i < other.size(); ++i) {
    isa::HwConfig c = base;
    other[i](c);
    isa::validate_config(c);
    EXPECT_NE(rtl_hardware_text(c), rtl_hardware_text(base)) << "change " << i;
  }
}

TEST(RtlModelKey, ABundledModelServesEveryConfigWithItsHardware) {
  isa::HwConfig small = isa::load_config(isa::resolve_config_path("small"));
  if (!rtl_model_available(small)) GTEST_SKIP() << "small is not built into this binary";
  small.name = "my_small";
  small.source = "/tmp/my_small.yaml";
  small.mem_latency_cycles = 250;
  small.clock_mhz = 150;
  EXPECT_TRUE(rtl_model_available(small));
  small.block_out = 16;
  EXPECT_FALSE(rtl_model_available(small));
}

TEST(RtlModelKey, AConfigTheRtlCannotBuildIsNamedNotBuilt) {
  isa::HwConfig c = tiny();
  c.block_in = 128;  // a 64 x 128 weight tile of 8 KiB: more than one AXI page
  c.block_out = 64;
  c.wgt_kib = 64;
  c.inp_kib = 4;
  c.acc_kib = 16;
  isa::validate_config(c);
  EXPECT_FALSE(rtl_model_available(c));
  try {
    RtlOptions o;
    o.build_model = true;
    o.cache_dir = "/nonexistent/never-created";
    RtlSim rtl(c, o);
    FAIL() << "the RTL cannot be built for this config";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("larger than a 4 KiB AXI page"), std::string::npos)
        << e.what();
  }
}

TEST(RtlModelKey, TheKeyCoversTheTools) {
  const std::string hw = rtl_hardware_text(tiny());
  Toolchain a;
  a.verilator_version = "Verilator 5.006 2023-01-22";
  a.compiler_version = "c++ (Debian 12.2.0-14) 12.2.0";
  Toolchain b = a;
  b.verilator_version = "Verilator 5.020 2024-01-01";
  Toolchain c = a;
  c.compiler_version = "c++ (Debian 13.1.0) 13.1.0";
  EXPECT_EQ(rtl_model_key(hw, a), rtl_model_key(hw, a));
  EXPECT_EQ(rtl_model_key(hw, a).size(), 16u);
  EXPECT_NE(rtl_model_key(hw, a), rtl_model_key(hw, b));
  EXPECT_NE(rtl_model_key(hw, a), rtl_model_key(hw, c));
  isa::HwConfig wide_out = tiny();
  wide_out.block_out = 8;
  EXPECT_NE(rtl_model_key(hw, a), rtl_model_key(rtl_hardware_text(wide_out), a));
}

TEST(RtlModelKit, HoldsTheSourcesThisBinaryWasBuiltFrom) {
  size_t rtl = 0;
  bool top = false;
  for (const KitFile &f : model_kit_files()) {
    std::ifstream in(std::string(VACC_SOURCE_DIR) + "/" + f.path, std::ios::binary);
    ASSERT_TRUE(in) << f.path;
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), f.text) << f.path << " differs from the embedded copy: rebuild vacc";
    rtl += f.rtl;
    top = top || std::string(f.path) == "hw/rtl/vacc_top.sv";
  }
  EXPECT_GE(rtl, 10u);
  EXPECT_TRUE(top);
  EXPECT_STREQ(model_kit_files().back().path, "support/error.cc");
}

}  // namespace
}  // namespace vacc::sim
