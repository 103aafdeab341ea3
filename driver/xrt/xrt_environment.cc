// Whether XRT can look for devices here, and what it finds. XRT locates its hardware shim as
// $XILINX_XRT/lib/libxrt_core.so.2; Debian installs it under the multiarch library directory,
// so XILINX_XRT must point at a folder whose lib/ is that directory. The messages say so.
#include "xrt_environment.h"

#include <experimental/xrt_system.h>
#include <fmt/format.h>
#include <xrt/xrt_device.h>

#include <cstdlib>
#include <exception>

#include "vacc/support/error.h"

#ifndef VACC_XRT_LIBDIR
#define VACC_XRT_LIBDIR "/usr/lib/x86_64-linux-gnu"
#endif

namespace vacc::driver {
namespace {

std::string setup_hint() {
  return fmt::format(
      "XRT loads its driver library from $XILINX_XRT/lib/libxrt_core.so.2. With Xilinx's XRT "
      "package run `source /opt/xilinx/xrt/setup.sh`; with Debian's XRT (libraries in {}) run "
      "`mkdir -p ~/.xrt && ln -sfn {} ~/.xrt/lib && export XILINX_XRT=~/.xrt`",
      VACC_XRT_LIBDIR, VACC_XRT_LIBDIR);
}

std::string no_device_reason() {
  return "XRT enumerated 0 devices. An Alveo card needs the xocl/xclmgmt kernel drivers (from "
         "Xilinx's XRT package; Debian ships only XRT's user-space libraries) and a shell flashed "
         "with `xbmgmt`; a Zynq board needs the zocl driver in its Linux image. See docs/fpga.md";
}

}  // namespace

unsigned xrt_device_count() {
  const char *root = std::getenv("XILINX_XRT");
  if (root == nullptr || *root == '\0')
    fail("XRT cannot look for FPGA devices: XILINX_XRT is not set. {}", setup_hint());
  try {
    return xrt::system::enumerate_devices();
  } catch (const std::exception &e) {
    fail("XRT cannot look for FPGA devices (XILINX_XRT={}): {}. {}", root, e.what(), setup_hint());
  }
}

XrtDeviceList list_xrt_devices() {
  XrtDeviceList list;
  unsigned count = 0;
  try {
    count = xrt_device_count();
  } catch (const Error &e) {
    list.problem = e.what();
    return list;
  }
  list.xrt_usable = true;
  if (count == 0) list.problem = no_device_reason();
  for (unsigned i = 0; i < count; ++i) {
    XrtDeviceInfo info;
    info.index = i;
    try {
      xrt::device device(i);
      info.bdf = device.get_info<xrt::info::device::bdf>();
      info.name = device.get_info<xrt::info::device::name>();
      xrt::uuid uuid = device.get_xclbin_uuid();
      if (uuid) info.xclbin = uuid.to_string();
    } catch (const std::exception &e) {
      info.name = fmt::format("(cannot open: {})", e.what());
    }
    list.devices.push_back(info);
  }
  return list;
}

std::string xrt_no_device_message() {
  return "no FPGA device found: " + no_device_reason();
}

}  // namespace vacc::driver
