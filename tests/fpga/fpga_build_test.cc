// fpga/build on this machine, which has no Vivado or Vitis: for every config it writes every
// file short of the vendor tools' own steps, then names exactly what is missing and exits 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "xclbin_fixture.h"

namespace vacc {
namespace {

namespace fs = std::filesystem;

constexpr const char *kAlveo = "xilinx_u250_gen3x16_xdma_4_1_202210_1";

std::vector<std::string> config_files() {
  std::vector<std::string> files;
  for (const auto &entry : fs::directory_iterator(std::string(VACC_SOURCE_DIR) + "/configs"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// Runs fpga/build with a PATH that holds no vendor tools.
test::CommandResult build(const std::string &config, const std::string &platform,
                          const std::string &out, const std::string &extra = "") {
  std::string env = std::string("env PATH=/usr/bin:/bin VACC='") + VACC_BINARY + "' ";
#ifdef VACC_HWGEN
  env += std::string("VACC_HWGEN='") + VACC_HWGEN + "' ";
#endif
  return test::run_command(env + "bash '" + VACC_SOURCE_DIR + "/fpga/build' --config '" + config +
                           "' --platform " + platform + " -o '" + out + "' " + extra);
}

// What fpga/build writes before it needs the RTL sources; checked in every case.
void expect_generated_files(const std::string &config_file, const std::string &out,
                            bool with_bank) {
  isa::HwConfig config = isa::load_config(config_file);
  std::string xml = test::read_text(out + "/kernel.xml");
  EXPECT_TRUE(has(xml, "name=\"m_axi_gmem\" mode=\"master\"")) << xml;
  EXPECT_TRUE(has(xml, "dataWidth=\"" + std::to_string(config.bus_bits) + "\"")) << xml;
  std::string cfg = test::read_text(out + "/link.cfg");
  EXPECT_TRUE(has(cfg, "nk=vacc_top:1:vacc_top_1")) << cfg;
  EXPECT_EQ(has(cfg, "sp=vacc_top_1.m_axi_gmem:DDR[0]"), with_bank) << cfg;
}

bool rtl_top_exists() {
  return fs::exists(std::string(VACC_SOURCE_DIR) + "/hw/rtl/vacc_top.sv");
}

TEST(FpgaBuild, EveryConfigShortOfVitis) {
  ASSERT_GE(config_files().size(), 3u);
  for (const std::string &file : config_files()) {
    SCOPED_TRACE(file);
    std::string name = fs::path(file).stem().string();
    std::string out = test::temp_dir("build_" + name);
    test::CommandResult r = build(file, kAlveo, out);
    expect_generated_files(file, out, true);
    ASSERT_TRUE(rtl_top_exists()) << "hw/rtl/vacc_top.sv is missing";
    EXPECT_EQ(r.exit_code, 2) << r.output;
    for (const char *f :
         {"kernel.xml", "link.cfg", "rtl/vacc_pkg.sv", "rtl/vacc_top.sv", "rtl_files.f",
          "package_kernel.tcl", "zynq_block_design.tcl", "commands.sh"})
      EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
    std::string files = test::read_text(out + "/rtl_files.f");
    EXPECT_TRUE(has(files, "\nrtl/vacc_pkg.sv\n")) << files;
    EXPECT_LT(files.find("rtl/vacc_pkg.sv"), files.find("rtl/vacc_top.sv")) << files;
    std::string commands = test::read_text(out + "/commands.sh");
    EXPECT_TRUE(has(commands, "-source package_kernel.tcl")) << commands;
    EXPECT_TRUE(has(commands, std::string("v++ --link --target hw --platform ") + kAlveo))
        << commands;
    EXPECT_TRUE(has(commands, "-o vacc_" + name + ".xclbin vacc_top.xo")) << commands;
    EXPECT_TRUE(has(r.output, "stopped before the vendor tools' steps")) << r.output;
    EXPECT_TRUE(has(r.output, "- vivado: not on PATH")) << r.output;
    EXPECT_TRUE(has(r.output, "- v++: not on PATH")) << r.output;
    EXPECT_TRUE(has(r.output, std::string("- platform '") + kAlveo + "'")) << r.output;
    EXPECT_TRUE(has(r.output, "finish with: bash " + out + "/commands.sh")) << r.output;
  }
}

TEST(FpgaBuild, ZynqFlowNeedsOnlyVivado) {
  std::string file = std::string(VACC_SOURCE_DIR) + "/configs/small.yaml";
  std::string out = test::temp_dir("zynq");
  test::CommandResult r = build(file, "pynq-z1", out);
  expect_generated_files(file, out, false);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r.output, "- vivado: not on PATH")) << r.output;
  EXPECT_FALSE(has(r.output, "v++")) << r.output;
  std::string commands = test::read_text(out + "/commands.sh");
  EXPECT_TRUE(has(commands, "-source zynq_block_design.tcl")) << commands;
  EXPECT_TRUE(has(commands, "xc7z020clg400-1")) << commands;
}

TEST(FpgaBuild, ExplicitBank) {
  std::string file = std::string(VACC_SOURCE_DIR) + "/configs/default.yaml";
  std::string out = test::temp_dir("bank");
  build(file, kAlveo, out, "--bank 'DDR[2]'");
  EXPECT_TRUE(has(test::read_text(out + "/link.cfg"), "sp=vacc_top_1.m_axi_gmem:DDR[2]"));
}

TEST(FpgaBuild, MissingPlatform) {
  test::CommandResult r =
      test::run_command(std::string("bash '") + VACC_SOURCE_DIR + "/fpga/build' --config default");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "fpga/build: error: --platform is required")) << r.output;
}

TEST(FpgaBuild, MissingConfig) {
  test::CommandResult r = test::run_command(std::string("bash '") + VACC_SOURCE_DIR +
                                            "/fpga/build' --platform pynq-z1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "fpga/build: error: --config is required")) << r.output;
}

TEST(FpgaBuild, BadConfigIsVaccsMessage) {
  std::string out = test::temp_dir("bad");
  test::CommandResult r = build("no_such_config", kAlveo, out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "error: config 'no_such_config' not found")) << r.output;
  EXPECT_FALSE(fs::exists(out + "/kernel.xml"));
}

test::CommandResult run_build(const std::string &env, const std::string &args) {
  return test::run_command("env " + env + " bash '" + VACC_SOURCE_DIR + "/fpga/build' " + args);
}

TEST(FpgaBuild, UnknownArgument) {
  test::CommandResult r = run_build("", "--config default --platform pynq-z1 --fast");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "fpga/build: error: unknown argument '--fast'")) << r.output;
}

TEST(FpgaBuild, BadTarget) {
  test::CommandResult r = run_build("", "--config default --platform pynq-z1 --target sw_emu");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "--target must be hw or hw_emu, not 'sw_emu'")) << r.output;
}

TEST(FpgaBuild, VaccNotExecutable) {
  test::CommandResult r = run_build("VACC=/nonexistent/vacc", "--config default --platform x");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "VACC='/nonexistent/vacc' is not an executable")) << r.output;
}

TEST(FpgaBuild, NoRtlGenerator) {
  std::string out = test::temp_dir("nohwgen");
  test::CommandResult r =
      run_build(std::string("VACC='") + VACC_BINARY + "' VACC_HWGEN=/nonexistent/vacc-hwgen",
                "--config default --platform pynq-z1 -o '" + out + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "cannot generate vacc_pkg.sv")) << r.output;
  EXPECT_TRUE(fs::exists(out + "/kernel.xml")) << "kernel.xml comes before the RTL";
}

TEST(FpgaGen, UnwritableOutput) {
  std::string file = test::temp_dir("gen") + "/a_file";
  test::write_file(file, std::string("x"));
  test::CommandResult r = test::run_command(std::string("'") + VACC_BINARY +
                                            "' fpga gen --config default -o '" + file + "/sub'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "error: cannot create output directory '" + file + "/sub'"))
      << r.output;
}

}  // namespace
}  // namespace vacc
