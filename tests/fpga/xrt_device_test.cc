// The xrt device without a board: each way of not having one ends in one clear message and a
// non-zero exit of `vacc`, never a crash. Run as subprocesses, because XRT decides once per
// process how it finds its driver library (XILINX_XRT).
#include "vacc/driver/xrt_device.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "vacc/driver/device.h"
#include "vacc/driver/xrt_kernel.h"
#include "vacc/isa/assembly.h"
#include "vacc/isa/config.h"
#include "vacc/isa/program.h"
#include "vacc/support/error.h"
#include "xclbin_fixture.h"

namespace vacc {
namespace {

constexpr const char *kPlatform = "xilinx_u250_gen3x16_xdma_4_1_202210_1";

std::string default_config() {
  return std::string(VACC_SOURCE_DIR) + "/configs/default.yaml";
}

// A directory with a one-instruction program for the default config and a valid xclbin.
struct Files {
  std::string dir, program, xclbin;
};
Files make_files() {
  Files f;
  f.dir = test::temp_dir("dev");
  isa::HwConfig config = isa::load_config(default_config());
  f.program = f.dir + "/finish.vprog";
  isa::save_program(isa::assemble(config, "finish\n", "finish.s"), f.program);
  f.xclbin = f.dir + "/vacc.xclbin";
  test::write_file(f.xclbin, test::make_xclbin(driver::xrt_kernel::kernel_xml(config), kPlatform));
  return f;
}

std::string vacc() {
  return std::string("'") + VACC_BINARY + "'";
}
std::string without_xrt() {
  return "env -u XILINX_XRT ";
}
std::string with_xrt() {
  return "env XILINX_XRT='" + test::xrt_root() + "' ";
}

std::string fpga_run(const Files &f, const std::string &xclbin) {
  return vacc() + " fpga run '" + f.program + "' --xclbin '" + xclbin + "' --config '" +
         default_config() + "'";
}

bool has(const test::CommandResult &r, const std::string &text) {
  return r.output.find(text) != std::string::npos;
}

TEST(XrtDevice, OpenDeviceWithoutXclbin) {
  unsetenv("VACC_XCLBIN");
  try {
    driver::open_device("xrt", isa::HwConfig{});
    FAIL() << "opened an xrt device without an xclbin";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("the xrt engine needs an xclbin: set VACC_XCLBIN"),
              std::string::npos)
        << e.what();
  }
}

TEST(XrtDevice, DevicesWithoutXilinxXrt) {
  test::CommandResult r = test::run_command(without_xrt() + vacc() + " devices");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "error: XRT cannot look for FPGA devices: XILINX_XRT is not set")) << r.output;
  EXPECT_TRUE(has(r, "lib/libxrt_core.so.2")) << r.output;
}

TEST(XrtDevice, DevicesWithBrokenXilinxXrt) {
  std::string root = test::temp_dir("empty_root");
  test::CommandResult r = test::run_command("env XILINX_XRT='" + root + "' " + vacc() + " devices");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "XRT cannot look for FPGA devices (XILINX_XRT=" + root + ")")) << r.output;
  EXPECT_TRUE(has(r, "No such library")) << r.output;
}

TEST(XrtDevice, DevicesFindsNone) {
  test::CommandResult r = test::run_command(with_xrt() + vacc() + " devices");
  if (r.exit_code == 0 && !has(r, "no FPGA devices")) GTEST_SKIP() << "a device is present";
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "no FPGA devices: XRT enumerated 0 devices")) << r.output;
}

TEST(XrtDevice, DevicesJson) {
  test::CommandResult r = test::run_command(with_xrt() + vacc() + " devices --json");
  if (!has(r, "\"devices\": []")) GTEST_SKIP() << "a device is present";
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "\"xrt_usable\": true")) << r.output;
}

TEST(XrtDevice, RunWithNoDevice) {
  Files f = make_files();
  test::CommandResult r = test::run_command(with_xrt() + fpga_run(f, f.xclbin));
  if (!has(r, "XRT enumerated 0 devices")) GTEST_SKIP() << "a device is present: " << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "error: no FPGA device found: XRT enumerated 0 devices")) << r.output;
}

TEST(XrtDevice, RunWithoutXilinxXrt) {
  Files f = make_files();
  test::CommandResult r = test::run_command(without_xrt() + fpga_run(f, f.xclbin));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "error: XRT cannot look for FPGA devices: XILINX_XRT is not set")) << r.output;
}

TEST(XrtDevice, RunWithMissingXclbin) {
  Files f = make_files();
  test::CommandResult r = test::run_command(with_xrt() + fpga_run(f, f.dir + "/none.xclbin"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "error: xclbin '" + f.dir + "/none.xclbin' does not exist")) << r.output;
}

TEST(XrtDevice, RunWithMalformedXclbin) {
  Files f = make_files();
  std::string bad = f.dir + "/bad.xclbin";
  test::write_file(bad, std::string("xclbin2") + std::string(1, '\0') + std::string(600, 'x'));
  test::CommandResult r = test::run_command(with_xrt() + fpga_run(f, bad));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "error: xclbin '" + bad + "' is malformed")) << r.output;
}

TEST(XrtDevice, CheckCommandAcceptsValidXclbin) {
  Files f = make_files();
  test::CommandResult r = test::run_command(vacc() + " fpga check --xclbin '" + f.xclbin + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "a valid vacc xclbin")) << r.output;
  EXPECT_TRUE(has(r, kPlatform)) << r.output;
}

}  // namespace
}  // namespace vacc
