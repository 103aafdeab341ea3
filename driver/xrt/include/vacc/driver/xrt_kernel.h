// The accelerator as a Vitis RTL kernel: its name and its arguments as XRT sees them. The
// argument offsets are the register map of registers.h, so the kernel.xml that packages the
// RTL, the check of an xclbin before it is loaded, and the driver's set_arg calls all come
// from this one table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vacc/isa/config.h"

namespace vacc::driver::xrt_kernel {

inline constexpr const char *kKernelName = "vacc_top";
inline constexpr const char *kControlPort = "s_axi_control";  // AXI4-Lite, ap_ctrl_hs
inline constexpr const char *kMemoryPort = "m_axi_gmem";      // AXI4 master to device memory
inline constexpr uint32_t kControlRange = 0x1000;             // 12-bit control address space

enum class ArgKind : uint8_t { kScalar, kGlobal };

struct KernelArg {
  const char *name;
  uint32_t offset;   // byte offset in the s_axi_control register space
  uint32_t size;     // bytes
  ArgKind kind;      // kGlobal: a device-memory pointer served by kMemoryPort
  const char *type;  // C type written into kernel.xml
};

// The kernel's arguments in argument-index order (XRT's set_arg index is the position).
const std::vector<KernelArg> &kernel_args();

// The text of kernel.xml for `package_xo -kernel_xml`: ports (the memory port's data width is
// memory.bus_bits of the config) and the arguments above.
std::string kernel_xml(const isa::HwConfig &config);

// The device-memory bank a platform exposes to kernels, for the v++ link's `sp=` line:
// "HBM[0]" on HBM cards (U50, U55C, U280), "DDR[0]" on other Alveo cards, "" on embedded
// platforms (Zynq-7000 / PYNQ, Zynq MPSoC, Versal), whose port goes to the PS memory.
std::string default_memory_bank(const std::string &platform);

// The v++ --link configuration: one compute unit, its memory port on `bank` (omitted when
// empty), its clock at the config's clock_mhz.
std::string link_config(const isa::HwConfig &config, const std::string &bank);

}  // namespace vacc::driver::xrt_kernel
