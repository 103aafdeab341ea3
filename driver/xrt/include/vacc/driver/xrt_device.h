// The "xrt" device: the accelerator on an FPGA board, through XRT's native C++ API. It loads an
// xclbin holding the vacc_top RTL kernel, keeps the whole device-memory image in one buffer
// object (the arena; a program's regions are sub-allocations of it at their offsets from the
// base), and maps the register-level host protocol of device.h onto XRT: writes to the
// argument registers set the kernel's arguments, a write of the start bit starts an xrt::run,
// wait() waits on it with a time-out, and the read-only counters are read from the compute
// unit's register space.
//
// Nothing here needs a board to be checked: the xclbin is validated (exists, parses, holds
// vacc_top with the register map's argument offsets) before any device is opened, and every
// failure, including "no device", is a vacc::Error with a message saying what to do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vacc/driver/device.h"
#include "vacc/isa/config.h"

namespace vacc::driver {

struct XrtOptions {
  std::string xclbin;        // path of the xclbin holding the vacc_top kernel (required)
  std::string device = "0";  // device index ("0", "1", ...) or PCIe BDF ("0000:65:00.1")
  // Smallest arena to allocate, in bytes; allocate() grows it to what a program needs.
  uint64_t min_arena_bytes = 0;
};

// The options for open_device("xrt", ...): `xclbin` and `device` as given, each taken from
// the environment when empty (VACC_XCLBIN, required in the end; VACC_XRT_DEVICE, optional).
XrtOptions xrt_options(const std::string &xclbin = "", const std::string &device = "");

// Validates the xclbin, finds the device and loads the xclbin onto it; throws vacc::Error with
// a message naming what is missing (no xclbin, a malformed one, XRT not set up, no device).
std::unique_ptr<Device> open_xrt_device(const XrtOptions &options, const isa::HwConfig &config);

// What `vacc devices` prints.
struct XrtDeviceInfo {
  unsigned index = 0;
  std::string bdf;
  std::string name;    // the shell / platform name XRT reports
  std::string xclbin;  // UUID of the loaded xclbin, "" if none
};
struct XrtDeviceList {
  bool xrt_usable = false;  // false: XRT itself could not look for devices (see `problem`)
  std::string problem;      // why there are no devices, when there are none
  std::vector<XrtDeviceInfo> devices;
};
XrtDeviceList list_xrt_devices();

// Checks that XRT can enumerate devices in this environment; throws vacc::Error saying how to
// set it up (XILINX_XRT and the location of libxrt_core) otherwise. Returns the device count.
unsigned xrt_device_count();

// What check_xclbin() found in a valid xclbin.
struct XclbinInfo {
  std::string uuid;
  std::string platform;  // the xsa / platform name it was linked for
  std::vector<std::string> kernels;
};
// Validates an xclbin without a device: the file exists and is an xclbin XRT can parse, and it
// holds the vacc_top kernel whose arguments sit at the offsets of registers.h.
XclbinInfo check_xclbin(const std::string &path);

}  // namespace vacc::driver
