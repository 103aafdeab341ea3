// kernel.xml and the v++ link configuration against their sources of truth: the argument
// offsets are those of registers.h and of the RTL's AXI4-Lite slave, the memory port is as
// wide as memory.bus_bits, the clock is clock_mhz. For every config in configs/.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "vacc/driver/registers.h"
#include "vacc/driver/xrt_kernel.h"
#include "vacc/isa/config.h"
#include "xclbin_fixture.h"

namespace vacc {
namespace {

namespace fs = std::filesystem;
namespace reg = driver::reg;

std::vector<std::string> config_files() {
  std::vector<std::string> files;
  for (const auto &entry : fs::directory_iterator(std::string(VACC_SOURCE_DIR) + "/configs"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::map<std::string, std::string> attributes(const std::string &element) {
  std::map<std::string, std::string> out;
  std::regex attr("([A-Za-z_]+)=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(element.begin(), element.end(), attr);
       it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = (*it)[2];
  return out;
}

std::vector<std::map<std::string, std::string>> elements(const std::string &xml,
                                                         const std::string &tag) {
  std::vector<std::map<std::string, std::string>> out;
  std::regex element("<" + tag + " [^>]*>");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), element);
       it != std::sregex_iterator(); ++it)
    out.push_back(attributes(it->str()));
  return out;
}

// The register each kernel argument must land on, written out from registers.h.
const std::map<std::string, uint32_t> &expected_offsets() {
  static const std::map<std::string, uint32_t> offsets = {
      {"insn_count", reg::kInsnCount},
      {"dram", reg::kBaseLow},
      {"insn_offset", reg::kInsnOffset},
  };
  return offsets;
}

TEST(KernelXml, ConfigsExist) {
  EXPECT_GE(config_files().size(), 3u);
}

TEST(KernelXml, ArgumentOffsetsAreTheRegisterMap) {
  for (const std::string &file : config_files()) {
    SCOPED_TRACE(file);
    isa::HwConfig config = isa::load_config(file);
    std::string xml = driver::xrt_kernel::kernel_xml(config);
    auto args = elements(xml, "arg");
    ASSERT_EQ(args.size(), expected_offsets().size()) << xml;
    for (size_t i = 0; i < args.size(); ++i) {
      auto &arg = args[i];
      SCOPED_TRACE(arg["name"]);
      ASSERT_TRUE(expected_offsets().count(arg["name"])) << "unexpected argument";
      EXPECT_EQ(std::stoul(arg["offset"], nullptr, 16), expected_offsets().at(arg["name"]));
      EXPECT_EQ(std::stoul(arg["id"]), i);
      bool global = arg["name"] == "dram";
      EXPECT_EQ(arg["addressQualifier"], global ? "1" : "0");
      EXPECT_EQ(arg["port"], global ? "m_axi_gmem" : "s_axi_control");
      EXPECT_EQ(std::stoul(arg["size"], nullptr, 16), global ? 8u : 4u);
    }
    // The 64-bit base spans both registers of the map.
    EXPECT_EQ(reg::kBaseHigh, reg::kBaseLow + 4);
  }
}

TEST(KernelXml, PortsFollowTheConfig) {
  for (const std::string &file : config_files()) {
    SCOPED_TRACE(file);
    isa::HwConfig config = isa::load_config(file);
    std::string xml = driver::xrt_kernel::kernel_xml(config);
    auto kernels = elements(xml, "kernel");
    ASSERT_EQ(kernels.size(), 1u);
    EXPECT_EQ(kernels[0]["name"], "vacc_top");
    EXPECT_EQ(kernels[0]["hwControlProtocol"], "ap_ctrl_hs");
    auto ports = elements(xml, "port");
    ASSERT_EQ(ports.size(), 2u);
    EXPECT_EQ(ports[0]["name"], "s_axi_control");
    EXPECT_EQ(ports[0]["mode"], "slave");
    EXPECT_EQ(ports[0]["dataWidth"], "32");
    EXPECT_EQ(std::stoul(ports[0]["range"], nullptr, 16), 0x1000u);  // 12-bit address space
    EXPECT_EQ(ports[1]["name"], "m_axi_gmem");
    EXPECT_EQ(ports[1]["mode"], "master");
    EXPECT_EQ(ports[1]["dataWidth"], std::to_string(config.bus_bits));
    // Every register of the map, counters included, lies inside the control range.
    EXPECT_LT(reg::kCycleLimit, std::stoul(ports[0]["range"], nullptr, 16));
  }
}

TEST(KernelXml, LinkConfigConnectsTheMemoryPortAndClock) {
  for (const std::string &file : config_files()) {
    SCOPED_TRACE(file);
    isa::HwConfig config = isa::load_config(file);
    std::string cfg = driver::xrt_kernel::link_config(config, "HBM[3]");
    EXPECT_NE(cfg.find("[connectivity]\nnk=vacc_top:1:vacc_top_1\n"), std::string::npos) << cfg;
    EXPECT_NE(cfg.find("sp=vacc_top_1.m_axi_gmem:HBM[3]\n"), std::string::npos) << cfg;
    EXPECT_NE(cfg.find("freqHz=" + std::to_string(std::llround(config.clock_mhz * 1e6)) +
                       ":vacc_top_1.ap_clk"),
              std::string::npos)
        << cfg;
    EXPECT_EQ(driver::xrt_kernel::link_config(config, "").find("sp="), std::string::npos);
  }
}

TEST(KernelXml, MemoryBankFromPlatform) {
  using driver::xrt_kernel::default_memory_bank;
  EXPECT_EQ(default_memory_bank("xilinx_u250_gen3x16_xdma_4_1_202210_1"), "DDR[0]");
  EXPECT_EQ(default_memory_bank("xilinx_u200_gen3x16_xdma_2_202110_1"), "DDR[0]");
  EXPECT_EQ(default_memory_bank("xilinx_u55c_gen3x16_xdma_3_202210_1"), "HBM[0]");
  EXPECT_EQ(default_memory_bank("xilinx_u280_gen3x16_xdma_1_202211_1"), "HBM[0]");
  EXPECT_EQ(default_memory_bank("xilinx_zcu104_base_202220_1"), "");
  EXPECT_EQ(default_memory_bank("pynq-z1"), "");
}

// The RTL's AXI4-Lite slave: the file under hw/rtl that decodes s_axi_control addresses.
std::string control_slave_source() {
  fs::path rtl = fs::path(VACC_SOURCE_DIR) / "hw" / "rtl";
  if (!fs::exists(rtl)) return "";
  std::vector<fs::path> candidates;
  for (const auto &entry : fs::directory_iterator(rtl)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".sv") continue;
    if (name.find("ctrl") != std::string::npos || name.find("control") != std::string::npos ||
        name.find("axil") != std::string::npos || name.find("regs") != std::string::npos)
      candidates.push_back(entry.path());
  }
  std::sort(candidates.begin(), candidates.end());
  return candidates.empty() ? "" : candidates.front().string();
}

// Address constants of the slave: `localparam ... Name = 12'h10` (or 'd / plain decimals),
// keyed by the name lower-cased without underscores.
std::map<std::string, uint32_t> rtl_address_constants(const std::string &text) {
  std::map<std::string, uint32_t> out;
  std::regex constant(R"((?:localparam|parameter)\b[^;=]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*=\s*)"
                      R"((?:\d+\s*)?'([hdHD])([0-9a-fA-F_]+)\s*;)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), constant);
       it != std::sregex_iterator(); ++it) {
    std::string name;
    for (char c : (*it)[1].str())
      if (c != '_') name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string digits;
    for (char c : (*it)[3].str())
      if (c != '_') digits += c;
    int base = std::tolower(static_cast<unsigned char>((*it)[2].str()[0])) == 'h' ? 16 : 10;
    out[name] = static_cast<uint32_t>(std::stoul(digits, nullptr, base));
  }
  return out;
}

TEST(KernelXml, ArgumentOffsetsAreTheRtlRegisterMap) {
  std::string file = control_slave_source();
  ASSERT_FALSE(file.empty()) << "hw/rtl has no AXI4-Lite control slave (vacc_control.sv)";
  auto constants = rtl_address_constants(test::read_text(file));
  // The RTL's names for the argument registers: anything that names the register, e.g.
  // AddrInsnCount, ADDR_INSN_COUNT, RegInsnCount.
  auto find = [&](std::vector<std::string> words) -> std::pair<std::string, int64_t> {
    for (const auto &[name, value] : constants) {
      bool all = true;
      for (const auto &w : words) all = all && name.find(w) != std::string::npos;
      if (all) return {name, value};
    }
    return {"", -1};
  };
  struct Want {
    std::string arg;
    std::vector<std::vector<std::string>> spellings;
  };
  std::vector<Want> wants = {
      {"insn_count", {{"insncount"}}},
      {"dram", {{"base", "lo"}, {"dram", "lo"}, {"base"}}},
      {"insn_offset", {{"insnoffset"}, {"insnoff"}}},
  };
  std::string found_names;
  for (const auto &[name, value] : constants) found_names += " " + name;
  for (const Want &want : wants) {
    std::pair<std::string, int64_t> hit{"", -1};
    for (const auto &words : want.spellings) {
      hit = find(words);
      if (hit.second >= 0) break;
    }
    ASSERT_GE(hit.second, 0) << file << " names no address constant for '" << want.arg
                             << "'; constants found:" << found_names;
    EXPECT_EQ(static_cast<uint32_t>(hit.second), expected_offsets().at(want.arg))
        << file << ": " << hit.first;
  }
}

// Every register of registers.h (read as text, the way the RTL engineer reads it) has the same
// offset in the RTL's slave. The RTL names registers Reg<Name>; three use the short names of
// Xilinx's ap_ctrl_hs documentation.
TEST(KernelXml, RtlRegisterMapIsRegistersH) {
  std::string file = control_slave_source();
  ASSERT_FALSE(file.empty()) << "hw/rtl has no AXI4-Lite control slave (vacc_control.sv)";
  auto rtl = rtl_address_constants(test::read_text(file));
  std::string header =
      test::read_text(std::string(VACC_SOURCE_DIR) + "/isa/include/vacc/isa/registers.h");
  std::regex offset(R"(inline constexpr uint32_t k([A-Za-z0-9]+) = (0x[0-9A-Fa-f]+);)");
  const std::map<std::string, std::string> aliases = {
      {"globalinterruptenable", "gie"}, {"interruptenable", "ier"}, {"interruptstatus", "isr"}};
  int compared = 0;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), offset);
       it != std::sregex_iterator(); ++it) {
    std::string name;
    for (char c : (*it)[1].str()) name += static_cast<char>(std::tolower(c));
    uint32_t value = static_cast<uint32_t>(std::stoul((*it)[2], nullptr, 16));
    std::string rtl_name = "reg" + (aliases.count(name) ? aliases.at(name) : name);
    ASSERT_TRUE(rtl.count(rtl_name)) << file << " has no constant for register k" << (*it)[1]
                                     << " (looked for " << rtl_name << ")";
    EXPECT_EQ(rtl.at(rtl_name), value) << "register k" << (*it)[1];
    ++compared;
  }
  EXPECT_GE(compared, 20) << "registers.h was not read";
}

}  // namespace
}  // namespace vacc
