// The generated vacc_pkg.sv against isa/'s tables: every instruction and micro-op field's
// offset and width is parsed back out of the package text and compared with insn_fields() /
// uop_fields(); the shape and depth parameters with HwConfig; the package is deterministic.
#include "vacc/hw/package.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "vacc/hw/dsp_packing.h"
#include "vacc/isa/config.h"
#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"

namespace vacc::hw {
namespace {

std::map<std::string, long> parse_params(const std::string &text) {
  std::map<std::string, long> params;
  const std::regex re(R"(localparam\s+int\s+unsigned\s+(\w+)\s*=\s*(\d+)\s*;)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    params[(*it)[1].str()] = std::stol((*it)[2].str());
  }
  return params;
}

class PackageTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PackageTest, FieldsMatchIsaTables) {
  const isa::HwConfig config =
      isa::load_config(std::string(VACC_TEST_CONFIG_DIR) + "/" + GetParam() + ".yaml");
  const std::string text = generate_package(config);
  const auto params = parse_params(text);
  const std::pair<isa::Opcode, std::string> kinds[] = {{isa::Opcode::kLoad, "Load"},
                                                       {isa::Opcode::kStore, "Store"},
                                                       {isa::Opcode::kGemm, "Gemm"},
                                                       {isa::Opcode::kFinish, "Finish"},
                                                       {isa::Opcode::kAlu, "Alu"}};
  int checked = 0;
  for (const auto &[op, prefix] : kinds) {
    for (const isa::Field &f : isa::insn_fields(config, op)) {
      const std::string name = prefix + camel_case(f.name);
      ASSERT_TRUE(params.count(name + "Off")) << name;
      EXPECT_EQ(params.at(name + "Off"), f.offset) << name;
      EXPECT_EQ(params.at(name + "W"), f.width) << name;
      ++checked;
    }
    EXPECT_EQ(params.at(prefix + "Bits"), isa::insn_bits(config, op));
    // The RTL decodes the common prefix with the Load offsets: it must be shared.
    for (const char *common : {"Opcode", "PopPrev", "PopNext", "PushPrev", "PushNext"}) {
      EXPECT_EQ(params.at(prefix + common + "Off"), params.at(std::string("Load") + common + "Off"));
    }
  }
  EXPECT_GT(checked, 40);
  for (const isa::Field &f : isa::uop_fields(config)) {
    const std::string name = "Uop" + camel_case(f.name);
    EXPECT_EQ(params.at(name + "Off"), f.offset) << name;
    EXPECT_EQ(params.at(name + "W"), f.width) << name;
  }
  EXPECT_EQ(params.at("Batch"), config.batch);
  EXPECT_EQ(params.at("BlockIn"), config.block_in);
  EXPECT_EQ(params.at("BlockOut"), config.block_out);
  EXPECT_EQ(params.at("AccBits"), config.acc_bits);
  EXPECT_EQ(params.at("BusBits"), config.bus_bits);
  EXPECT_EQ(params.at("InpDepth"), config.inp_depth());
  EXPECT_EQ(params.at("WgtDepth"), config.wgt_depth());
  EXPECT_EQ(params.at("AccDepth"), config.acc_depth());
  EXPECT_EQ(params.at("UopDepth"), config.uop_depth());
  EXPECT_EQ(params.at("AccIdxW"), config.acc_index_bits());
  EXPECT_EQ(params.at("UopElemBits"), 8 * config.uop_bytes());
  EXPECT_EQ(params.at("WgtElemBits"), 8 * config.wgt_tile_bytes());
  EXPECT_EQ(params.at("InsnQueueDepth"), config.insn_queue_depth);
  EXPECT_EQ(params.at("TokenQueueDepth"), config.token_queue_depth);
  EXPECT_EQ(text, generate_package(config));  // deterministic
}

INSTANTIATE_TEST_SUITE_P(Configs, PackageTest, ::testing::Values("default", "small", "wide"));

// gemm.dsp_packing reaches the package as GemmDspPacking: `auto` packs where the part's DSPs
// would not hold the unpacked core (the default on a Zynq-7020), `on` / `off` as written.
TEST(Package, DspPackingFollowsTheSettingAndThePart) {
  auto packed = [](const isa::HwConfig &c) {
    return parse_params(generate_package(c)).at("GemmDspPacking");
  };
  auto bundled = [](const char *name) {
    return isa::load_config(std::string(VACC_TEST_CONFIG_DIR) + "/" + name + ".yaml");
  };
  isa::HwConfig def = bundled("default");
  EXPECT_EQ(packed(def), 1);  // ~304 DSP48s unpacked, a Zynq-7020 has 220
  EXPECT_EQ(plan_dsp_packing(def).dsps_unpacked, 16 * 16 + 16 * 3);
  EXPECT_EQ(plan_dsp_packing(def).dsps_packed, 16 * 16 / 2 + 16 * 3);
  EXPECT_EQ(packed(bundled("small")), 0);  // 88 of 220
  EXPECT_EQ(packed(bundled("wide")), 0);   // an Alveo U250 has 12 288
  def.dsp_packing = isa::DspPacking::kOff;
  EXPECT_EQ(packed(def), 0);
  isa::HwConfig small = bundled("small");
  small.dsp_packing = isa::DspPacking::kOn;
  EXPECT_EQ(packed(small), 1);
  isa::HwConfig unknown = bundled("default");
  unknown.fpga_part = "xc9k999";
  EXPECT_EQ(packed(unknown), 0);
  EXPECT_NE(plan_dsp_packing(unknown).reason.find("'xc9k999' is not a part vacc knows"),
            std::string::npos);
  // 1 x 128 x 1 on a Zybo (80 DSPs): too many DSPs, but no two products share an operand.
  isa::HwConfig column = bundled("small");
  column.block_in = 128;
  column.block_out = 1;
  column.fpga_part = "xc7z010";
  EXPECT_EQ(packed(column), 0);
  EXPECT_NE(plan_dsp_packing(column).reason.find("no two products"), std::string::npos);
}

TEST(Package, CamelCase) {
  EXPECT_EQ(camel_case("sram_base"), "SramBase");
  EXPECT_EQ(camel_case("acc_factor_out"), "AccFactorOut");
  EXPECT_EQ(camel_case("imm"), "Imm");
}

TEST(Package, RejectsATileLargerThanAPage) {
  isa::HwConfig config;
  config.name = "huge";
  config.block_in = 64;
  config.block_out = 128;  // an 8 KiB weight tile
  config.wgt_kib = 1024;
  try {
    generate_package(config);
    FAIL() << "expected vacc::Error";
  } catch (const vacc::Error &e) {
    EXPECT_NE(std::string(e.what()).find("wgt element of 8192 bytes"), std::string::npos)
        << e.what();
  }
}

// A config that skipped the rules (batch 3: 48-byte input tiles) would give scratchpads whose
// depth no $clog2-bit address fits exactly.
TEST(Package, RejectsADepthThatIsNotAPowerOfTwo) {
  isa::HwConfig config;
  config.name = "odd";
  config.batch = 3;
  try {
    generate_package(config);
    FAIL() << "expected vacc::Error";
  } catch (const vacc::Error &e) {
    EXPECT_NE(std::string(e.what()).find("is not a power of two"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vacc::hw
