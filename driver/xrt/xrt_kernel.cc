#include "vacc/driver/xrt_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "vacc/driver/registers.h"

namespace vacc::driver::xrt_kernel {

const std::vector<KernelArg> &kernel_args() {
  // Every register the host writes for a run (DESIGN.md's register map). The counters and the
  // cycle limit are not arguments: the driver reads and writes them through the register
  // interface of the compute unit.
  static const std::vector<KernelArg> args = {
      {"insn_count", reg::kInsnCount, 4, ArgKind::kScalar, "uint"},
      {"dram", reg::kBaseLow, 8, ArgKind::kGlobal, "void*"},
      {"insn_offset", reg::kInsnOffset, 4, ArgKind::kScalar, "uint"},
  };
  return args;
}

std::string kernel_xml(const isa::HwConfig &config) {
  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<!-- vacc RTL kernel for config '{}'; generated from registers.h -->\n",
                     config.name);
  out += "<root versionMajor=\"1\" versionMinor=\"6\">\n";
  out += fmt::format(
      "  <kernel name=\"{}\" language=\"ip_c\" vlnv=\"vacc.dev:kernel:{}:1.0\" attributes=\"\" "
      "preferredWorkGroupSizeMultiple=\"0\" workGroupSize=\"1\" interrupt=\"true\" "
      "hwControlProtocol=\"ap_ctrl_hs\">\n",
      kKernelName, kKernelName);
  out += "    <ports>\n";
  out += fmt::format(
      "      <port name=\"{}\" mode=\"slave\" range=\"0x{:X}\" dataWidth=\"32\" "
      "portType=\"addressable\" base=\"0x0\"/>\n",
      kControlPort, kControlRange);
  out += fmt::format(
      "      <port name=\"{}\" mode=\"master\" range=\"0xFFFFFFFFFFFFFFFF\" dataWidth=\"{}\" "
      "portType=\"addressable\" base=\"0x0\"/>\n",
      kMemoryPort, config.bus_bits);
  out += "    </ports>\n";
  out += "    <args>\n";
  const auto &args = kernel_args();
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg &arg = args[i];
    bool global = arg.kind == ArgKind::kGlobal;
    out += fmt::format(
        "      <arg name=\"{}\" addressQualifier=\"{}\" id=\"{}\" port=\"{}\" size=\"0x{:X}\" "
        "offset=\"0x{:03X}\" type=\"{}\" hostOffset=\"0x0\" hostSize=\"0x{:X}\"/>\n",
        arg.name, global ? 1 : 0, i, global ? kMemoryPort : kControlPort, arg.size, arg.offset,
        arg.type, arg.size);
  }
  out += "    </args>\n";
  out += "  </kernel>\n";
  out += "</root>\n";
  return out;
}

std::string default_memory_bank(const std::string &platform) {
  std::string p = platform;
  std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return std::tolower(c); });
  auto has = [&](const char *s) { return p.find(s) != std::string::npos; };
  if (has("zcu") || has("vck") || has("kv260") || has("kr260") || has("zed") || has("ultra96") ||
      has("pynq") || has("zynq") || has("zc70"))
    return "";
  if (has("u50") || has("u55") || has("u280") || has("u26")) return "HBM[0]";
  return "DDR[0]";
}

std::string link_config(const isa::HwConfig &config, const std::string &bank) {
  std::string cu = fmt::format("{}_1", kKernelName);
  std::string out;
  out += fmt::format("# v++ --link configuration for vacc config '{}'.\n", config.name);
  out += "[connectivity]\n";
  out += fmt::format("nk={}:1:{}\n", kKernelName, cu);
  if (!bank.empty()) {
    out += "# The single AXI master sees the whole device-memory arena: one bank.\n";
    out += fmt::format("sp={}.{}:{}\n", cu, kMemoryPort, bank);
  }
  out += "\n[clock]\n";
  out += fmt::format("freqHz={}:{}.ap_clk\n", std::llround(config.clock_mhz * 1e6), cu);
  return out;
}

}  // namespace vacc::driver::xrt_kernel
