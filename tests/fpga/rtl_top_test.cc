// The top-level ports of vacc_top satisfy Vitis's rules for RTL kernels (UG1393, "RTL Kernel
// Requirements"): a clock ap_clk, an active-low reset ap_rst_n, an optional interrupt, one
// AXI4-Lite slave s_axi_control, AXI4 masters m_axi_<name>, each signal named
// <interface>_<axi signal> in lower case with the AXI direction, and no other ports.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "xclbin_fixture.h"

namespace vacc {
namespace {

struct Port {
  std::string direction;  // input / output
  std::string range;      // "[63:0]" or ""
};

std::string top_path() {
  return std::string(VACC_SOURCE_DIR) + "/hw/rtl/vacc_top.sv";
}

std::string strip_comments(const std::string &text) {
  std::string out = std::regex_replace(text, std::regex(R"(//[^\n]*)"), "");
  return std::regex_replace(out, std::regex(R"(/\*[\s\S]*?\*/)"), "");
}

// The ANSI port list of `module vacc_top ... ( ... );`.
std::map<std::string, Port> parse_ports(const std::string &source) {
  std::string text = strip_comments(source);
  std::map<std::string, Port> ports;
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(R"(\bmodule\s+vacc_top\b)"))) return ports;
  size_t pos = m.position() + m.length();
  // Skip a parameter list #( ... ).
  size_t hash = text.find_first_not_of(" \t\r\n", pos);
  if (hash != std::string::npos && text[hash] == '#') {
    int depth = 0;
    for (pos = text.find('(', hash); pos < text.size(); ++pos) {
      if (text[pos] == '(') ++depth;
      if (text[pos] == ')' && --depth == 0) break;
    }
    ++pos;
  }
  size_t open = text.find('(', pos);
  int depth = 0;
  size_t close = open;
  for (; close < text.size(); ++close) {
    if (text[close] == '(') ++depth;
    if (text[close] == ')' && --depth == 0) break;
  }
  std::string list = text.substr(open + 1, close - open - 1);
  std::string direction;
  std::regex decl(
      R"(^\s*(input|output|inout)?\s*(?:wire|logic|reg|var)?\s*(?:signed|unsigned)?\s*)"
      R"(((?:\[[^\]]*\]\s*)*)([A-Za-z_][A-Za-z0-9_$]*)\s*$)");
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(start, comma - start);
    std::smatch d;
    if (std::regex_match(item, d, decl)) {
      if (d[1].matched) direction = d[1];
      ports[d[3]] = {direction, std::regex_replace(d[2].str(), std::regex(R"(\s+)"), "")};
    } else if (item.find_first_not_of(" \t\r\n") != std::string::npos) {
      ports["<unparsed: " + item + ">"] = {};
    }
    start = comma + 1;
  }
  return ports;
}

// AXI signals and their direction seen from a master ("output" = driven by the master).
const std::map<std::string, std::string> &axi_signals() {
  static const std::map<std::string, std::string> s = {
      {"awvalid", "output"}, {"awready", "input"},  {"awaddr", "output"}, {"awlen", "output"},
      {"awsize", "output"},  {"awburst", "output"}, {"awid", "output"},   {"awlock", "output"},
      {"awcache", "output"}, {"awprot", "output"},  {"awqos", "output"},  {"awregion", "output"},
      {"awuser", "output"},  {"wvalid", "output"},  {"wready", "input"},  {"wdata", "output"},
      {"wstrb", "output"},   {"wlast", "output"},   {"wuser", "output"},  {"bvalid", "input"},
      {"bready", "output"},  {"bresp", "input"},    {"bid", "input"},     {"buser", "input"},
      {"arvalid", "output"}, {"arready", "input"},  {"araddr", "output"}, {"arlen", "output"},
      {"arsize", "output"},  {"arburst", "output"}, {"arid", "output"},   {"arlock", "output"},
      {"arcache", "output"}, {"arprot", "output"},  {"arqos", "output"},  {"arregion", "output"},
      {"aruser", "output"},  {"rvalid", "input"},   {"rready", "output"}, {"rdata", "input"},
      {"rresp", "input"},    {"rlast", "input"},    {"rid", "input"},     {"ruser", "input"},
  };
  return s;
}

const std::set<std::string> kLiteRequired = {
    "awvalid", "awready", "awaddr",  "wvalid", "wready", "wdata",  "wstrb", "bvalid", "bready",
    "bresp",   "arvalid", "arready", "araddr", "rvalid", "rready", "rdata", "rresp"};
const std::set<std::string> kFullRequired = {
    "awvalid", "awready", "awaddr", "awlen",  "awsize", "awburst", "wvalid",  "wready", "wdata",
    "wstrb",   "wlast",   "bvalid", "bready", "bresp",  "arvalid", "arready", "araddr", "arlen",
    "arsize",  "arburst", "rvalid", "rready", "rdata",  "rresp",   "rlast"};

std::string flip(const std::string &direction) {
  return direction == "input" ? "output" : "input";
}

// A literal range "[N-1:0]" or "[N:0]" as a width, or -1 when it uses parameters.
int literal_width(const std::string &range) {
  std::smatch m;
  if (std::regex_match(range, m, std::regex(R"(\[(\d+):0\])"))) return std::stoi(m[1]) + 1;
  if (range.empty()) return 1;
  return -1;
}

class RtlTop : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(top_path())) GTEST_SKIP() << top_path() << " does not exist yet";
    ports_ = parse_ports(test::read_text(top_path()));
    ASSERT_FALSE(ports_.empty()) << "no `module vacc_top (...)` port list in " << top_path();
  }
  std::map<std::string, Port> ports_;
};

TEST_F(RtlTop, EveryPortBelongsToAVitisInterface) {
  std::map<std::string, std::set<std::string>> interfaces;  // interface -> signals
  for (const auto &[name, port] : ports_) {
    SCOPED_TRACE(name);
    ASSERT_EQ(name.find("<unparsed"), std::string::npos);
    std::string lower = name;
    for (char &c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(name, lower) << "Vitis infers interfaces from lower-case port names";
    if (name == "ap_clk" || name == "ap_rst_n" || name == "ap_clk_2" || name == "ap_rst_n_2") {
      EXPECT_EQ(port.direction, "input");
      EXPECT_EQ(literal_width(port.range), 1);
      continue;
    }
    if (name == "interrupt") {
      EXPECT_EQ(port.direction, "output");
      EXPECT_EQ(literal_width(port.range), 1);
      continue;
    }
    std::smatch m;
    ASSERT_TRUE(
        std::regex_match(name, m, std::regex(R"((s_axi_[a-z0-9]+|m_axi_[a-z0-9]+)_([a-z]+))")))
        << "not ap_clk, ap_rst_n, interrupt, s_axi_<name>_<signal> or m_axi_<name>_<signal>";
    std::string interface = m[1], signal = m[2];
    ASSERT_TRUE(axi_signals().count(signal)) << "'" << signal << "' is not an AXI signal";
    bool slave = interface.rfind("s_axi_", 0) == 0;
    std::string want = slave ? flip(axi_signals().at(signal)) : axi_signals().at(signal);
    EXPECT_EQ(port.direction, want)
        << "wrong direction for an AXI " << (slave ? "slave" : "master");
    interfaces[interface].insert(signal);
  }
  ASSERT_TRUE(ports_.count("ap_clk")) << "an RTL kernel needs the clock ap_clk";
  ASSERT_TRUE(ports_.count("ap_rst_n")) << "an RTL kernel needs the active-low reset ap_rst_n";
  ASSERT_TRUE(interfaces.count("s_axi_control"))
      << "an ap_ctrl_hs RTL kernel needs the AXI4-Lite slave s_axi_control";
  for (const auto &signal : kLiteRequired)
    EXPECT_TRUE(interfaces["s_axi_control"].count(signal)) << "s_axi_control_" << signal;
  int masters = 0;
  for (const auto &[interface, signals] : interfaces) {
    if (interface.rfind("m_axi_", 0) != 0) continue;
    ++masters;
    for (const auto &signal : kFullRequired)
      EXPECT_TRUE(signals.count(signal)) << interface << "_" << signal;
  }
  EXPECT_GE(masters, 1) << "the kernel needs an AXI4 master to device memory";
  EXPECT_TRUE(interfaces.count("m_axi_gmem")) << "kernel.xml names the master m_axi_gmem";
}

TEST_F(RtlTop, WidthsThatVitisFixes) {
  auto width = [&](const std::string &name) {
    return ports_.count(name) ? literal_width(ports_.at(name).range) : -2;
  };
  // Only literal ranges can be checked here; parameterized ones are Verilator's to elaborate.
  for (const char *name : {"s_axi_control_wdata", "s_axi_control_rdata"})
    if (width(name) != -1) {
      EXPECT_EQ(width(name), 32) << name;
    }
  for (const char *name : {"s_axi_control_awaddr", "s_axi_control_araddr"})
    if (width(name) != -1) {
      EXPECT_EQ(width(name), 12) << name;
    }
  for (const char *name : {"m_axi_gmem_awaddr", "m_axi_gmem_araddr"})
    if (width(name) != -1) {
      EXPECT_EQ(width(name), 64) << name;
    }
  for (const char *name : {"m_axi_gmem_awlen", "m_axi_gmem_arlen"})
    if (width(name) != -1) {
      EXPECT_EQ(width(name), 8) << name;
    }
}

}  // namespace
}  // namespace vacc
