#include "xclbin_fixture.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <xclbin.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>

namespace vacc::test {
namespace {

// The elements of kernel.xml that v++ copies into the xclbin's metadata.
std::string metadata_xml(const std::string &kernel_xml) {
  std::smatch m;
  std::regex kernel_tag("<kernel [^>]*>");
  if (!std::regex_search(kernel_xml, m, kernel_tag)) return "<project/>";  // malformed on purpose
  std::string kernel_open = m.str();
  std::string body;
  std::regex element("<(port|arg) [^>]*/>");
  for (auto it = std::sregex_iterator(kernel_xml.begin(), kernel_xml.end(), element);
       it != std::sregex_iterator(); ++it)
    body += "          " + it->str() + "\n";
  std::smatch name;
  std::regex name_attr("name=\"([^\"]*)\"");
  std::regex_search(kernel_open, name, name_attr);
  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<project name=\"vacc\">\n";
  out += "  <platform vendor=\"xilinx\" boardid=\"test\" name=\"test\" featureRomTime=\"0\">\n";
  out += "    <version major=\"1\" minor=\"0\"/>\n    <description/>\n";
  out += "    <device name=\"fpga0\" fpgaDevice=\"virtexuplus\" addrWidth=\"0\">\n";
  out +=
      "      <core name=\"OCL_REGION_0\" target=\"bitstream\" type=\"clc_region\" "
      "clockFreq=\"0MHz\" numComputeUnits=\"1\">\n";
  out += "        " + kernel_open + "\n" + body;
  out += "          <instance name=\"" + name[1].str() + "_1\">\n";
  out += "            <addrRemap base=\"0x1800000\" port=\"s_axi_control\"/>\n";
  out += "          </instance>\n        </kernel>\n      </core>\n    </device>\n";
  out += "  </platform>\n</project>\n";
  return out;
}

template <typename T>
std::vector<char> bytes_of(const T &value) {
  std::vector<char> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

}  // namespace

std::vector<char> make_xclbin(const std::string &kernel_xml, const std::string &platform) {
  std::string xml = metadata_xml(kernel_xml);
  std::smatch name;
  std::regex_search(kernel_xml, name, std::regex("<kernel name=\"([^\"]*)\""));
  std::string cu_name = name[1].str() + ":" + name[1].str() + "_1";

  ip_layout ips{};
  ips.m_count = 1;
  ips.m_ip_data[0].m_type = IP_KERNEL;
  ips.m_ip_data[0].properties = 0x0101;  // interrupt enabled, ap_ctrl_hs
  ips.m_ip_data[0].m_base_address = 0x1800000;
  std::strncpy(reinterpret_cast<char *>(ips.m_ip_data[0].m_name), cu_name.c_str(), 63);
  mem_topology mems{};
  mems.m_count = 1;
  mems.m_mem_data[0].m_type = MEM_DDR4;
  mems.m_mem_data[0].m_used = 1;
  mems.m_mem_data[0].m_size = 1 << 20;  // KiB
  mems.m_mem_data[0].m_base_address = 0x4000000000;
  std::strncpy(reinterpret_cast<char *>(mems.m_mem_data[0].m_tag), "DDR[0]", 15);
  connectivity conn{};
  conn.m_count = 1;
  conn.m_connection[0] = {1, 0, 0};  // argument 1 (dram) of CU 0 on bank 0

  std::vector<std::pair<axlf_section_kind, std::vector<char>>> sections = {
      {EMBEDDED_METADATA, std::vector<char>(xml.begin(), xml.end())},
      {IP_LAYOUT, bytes_of(ips)},
      {MEM_TOPOLOGY, bytes_of(mems)},
      {CONNECTIVITY, bytes_of(conn)},
  };
  size_t header = sizeof(axlf) + (sections.size() - 1) * sizeof(axlf_section_header);
  std::vector<char> out((header + 7) / 8 * 8, 0);
  axlf top{};
  std::memcpy(top.m_magic, "xclbin2", 8);
  top.m_signature_length = -1;
  std::memset(top.reserved, 0xFF, sizeof(top.reserved));
  top.m_header.m_versionMajor = 2;
  top.m_header.m_numSections = static_cast<uint32_t>(sections.size());
  std::strncpy(reinterpret_cast<char *>(top.m_header.m_platformVBNV), platform.c_str(), 63);
  for (int i = 0; i < 16; ++i) top.m_header.uuid[i] = static_cast<unsigned char>(0xA0 + i);
  std::vector<axlf_section_header> table(sections.size());
  for (size_t i = 0; i < sections.size(); ++i) {
    table[i] = {};
    table[i].m_sectionKind = sections[i].first;
    std::strncpy(table[i].m_sectionName, "vacc_test", 15);
    table[i].m_sectionOffset = out.size();
    table[i].m_sectionSize = sections[i].second.size();
    out.insert(out.end(), sections[i].second.begin(), sections[i].second.end());
    out.resize((out.size() + 7) / 8 * 8, 0);
  }
  top.m_header.m_length = out.size();
  top.m_sections[0] = table[0];
  std::memcpy(out.data(), &top, sizeof(axlf));
  for (size_t i = 1; i < table.size(); ++i)
    std::memcpy(out.data() + offsetof(axlf, m_sections) + i * sizeof(axlf_section_header),
                &table[i], sizeof(axlf_section_header));
  return out;
}

void write_file(const std::string &path, const std::vector<char> &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

void write_file(const std::string &path, const std::string &text) {
  write_file(path, std::vector<char>(text.begin(), text.end()));
}

std::string read_text(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_dir(const std::string &tag) {
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = tag;
  if (info != nullptr) name += std::string("_") + info->test_suite_name() + "_" + info->name();
  for (char &c : name)
    if (c == '/') c = '_';
  auto dir = std::filesystem::temp_directory_path() / ("vacc_fpga_test_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

CommandResult run_command(const std::string &command) {
  CommandResult result;
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  int status = pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

std::string xrt_root() {
  // One per test: ctest may run tests in parallel.
  std::filesystem::path root = temp_dir("xrt_root");
  std::filesystem::create_directory_symlink(VACC_XRT_LIBDIR, root / "lib");
  return root.string();
}

}  // namespace vacc::test
