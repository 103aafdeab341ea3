// check_xclbin(): every way an xclbin can be wrong is a message naming the file, found before
// any device is opened. The fixtures are xclbin containers read by XRT's own parser.
#include <gtest/gtest.h>
#include <xclbin.h>

#include <cstring>
#include <string>

#include "vacc/driver/xrt_device.h"
#include "vacc/driver/xrt_kernel.h"
#include "vacc/isa/config.h"
#include "vacc/support/error.h"
#include "xclbin_fixture.h"

namespace vacc {
namespace {

constexpr const char *kPlatform = "xilinx_u250_gen3x16_xdma_4_1_202210_1";

std::string kernel_xml() {
  return driver::xrt_kernel::kernel_xml(isa::HwConfig{});
}

std::string replace(std::string text, const std::string &from, const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "fixture text has no '" << from << "'";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The message check_xclbin() throws for `path`, or "" when it accepts the file.
std::string check_message(const std::string &path) {
  try {
    driver::check_xclbin(path);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(XclbinCheck, AcceptsAnXclbinLinkedFromTheGeneratedKernelXml) {
  std::string path = test::temp_dir("x") + "/vacc.xclbin";
  test::write_file(path, test::make_xclbin(kernel_xml(), kPlatform));
  driver::XclbinInfo info = driver::check_xclbin(path);
  EXPECT_EQ(info.platform, kPlatform);
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0], "vacc_top");
  EXPECT_EQ(info.uuid, "a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
}

TEST(XclbinCheck, NoPathGiven) {
  EXPECT_NE(check_message("").find("no xclbin given: pass --xclbin FILE"), std::string::npos);
}

TEST(XclbinCheck, MissingFile) {
  std::string path = test::temp_dir("x") + "/absent.xclbin";
  std::string message = check_message(path);
  EXPECT_NE(message.find("xclbin '" + path + "' does not exist"), std::string::npos) << message;
  EXPECT_NE(message.find("fpga/build"), std::string::npos) << message;
}

TEST(XclbinCheck, DirectoryInsteadOfFile) {
  std::string dir = test::temp_dir("x");
  EXPECT_NE(check_message(dir).find("is not a regular file"), std::string::npos);
}

TEST(XclbinCheck, NotAnXclbin) {
  std::string path = test::temp_dir("x") + "/bitstream.bit";
  test::write_file(path, std::string("this is a text file, not an xclbin\n"));
  std::string message = check_message(path);
  EXPECT_NE(message.find("is not an xclbin: it does not start with the magic \"xclbin2\""),
            std::string::npos)
      << message;
}

TEST(XclbinCheck, TruncatedHeader) {
  std::string path = test::temp_dir("x") + "/short.xclbin";
  std::vector<char> bytes = test::make_xclbin(kernel_xml(), kPlatform);
  bytes.resize(300);
  test::write_file(path, bytes);
  std::string message = check_message(path);
  EXPECT_NE(message.find("is malformed: 300 bytes is shorter than its 496-byte header"),
            std::string::npos)
      << message;
}

TEST(XclbinCheck, LengthDisagreesWithFile) {
  std::string path = test::temp_dir("x") + "/cut.xclbin";
  std::vector<char> bytes = test::make_xclbin(kernel_xml(), kPlatform);
  size_t full = bytes.size();
  bytes.resize(full - 16);
  test::write_file(path, bytes);
  std::string message = check_message(path);
  EXPECT_NE(message.find("its header gives a length of " + std::to_string(full) + " bytes"),
            std::string::npos)
      << message;
}

TEST(XclbinCheck, SectionOutsideTheFile) {
  std::string path = test::temp_dir("x") + "/bad_section.xclbin";
  std::vector<char> bytes = test::make_xclbin(kernel_xml(), kPlatform);
  axlf_section_header section;
  size_t at = offsetof(axlf, m_sections) + sizeof(axlf_section_header);  // the second section
  std::memcpy(&section, bytes.data() + at, sizeof(section));
  section.m_sectionSize = 1u << 30;
  std::memcpy(bytes.data() + at, &section, sizeof(section));
  test::write_file(path, bytes);
  std::string message = check_message(path);
  EXPECT_NE(message.find("section 1 (kind 8) lies outside the file"), std::string::npos) << message;
}

TEST(XclbinCheck, TooManySections) {
  std::string path = test::temp_dir("x") + "/table.xclbin";
  std::vector<char> bytes = test::make_xclbin(kernel_xml(), kPlatform);
  axlf top;
  std::memcpy(&top, bytes.data(), sizeof(top));
  top.m_header.m_numSections = 5000;
  std::memcpy(bytes.data(), &top, sizeof(top));
  test::write_file(path, bytes);
  std::string message = check_message(path);
  EXPECT_NE(message.find("section table (5000 sections) does not fit the file"), std::string::npos)
      << message;
}

TEST(XclbinCheck, MetadataXrtCannotParse) {
  std::string path = test::temp_dir("x") + "/bad_xml.xclbin";
  // A metadata section that is not XML: XRT's parser throws, the check reports it.
  std::string broken = replace(kernel_xml(), "<arg name=\"dram\"", "<arg name=\"dram\" <<");
  test::write_file(path, test::make_xclbin(broken, kPlatform));
  std::string message = check_message(path);
  EXPECT_NE(message.find("xclbin '" + path + "' is malformed: XRT cannot"), std::string::npos)
      << message;
}

TEST(XclbinCheck, OtherKernel) {
  std::string path = test::temp_dir("x") + "/vadd.xclbin";
  std::string xml = replace(kernel_xml(), "<kernel name=\"vacc_top\"", "<kernel name=\"vadd\"");
  test::write_file(path, test::make_xclbin(xml, kPlatform));
  std::string message = check_message(path);
  EXPECT_NE(message.find("has no kernel 'vacc_top' (it holds: vadd)"), std::string::npos)
      << message;
}

TEST(XclbinCheck, ArgumentAtAnotherOffset) {
  std::string path = test::temp_dir("x") + "/moved.xclbin";
  std::string xml = replace(kernel_xml(), "offset=\"0x020\"", "offset=\"0x030\"");
  test::write_file(path, test::make_xclbin(xml, kPlatform));
  std::string message = check_message(path);
  EXPECT_NE(message.find("argument 'insn_offset' of kernel 'vacc_top' is at offset 0x30, but "
                         "vacc's register map puts it at 0x20"),
            std::string::npos)
      << message;
}

TEST(XclbinCheck, ArgumentMissing) {
  std::string path = test::temp_dir("x") + "/no_count.xclbin";
  std::string xml = replace(kernel_xml(), "<arg name=\"insn_count\"", "<arg name=\"count\"");
  test::write_file(path, test::make_xclbin(xml, kPlatform));
  std::string message = check_message(path);
  EXPECT_NE(message.find("kernel 'vacc_top' has no argument 'insn_count'"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace vacc
