// The one place that knows every device implementation.
#include "vacc/driver/device.h"

#include "fsim_device.h"
#include "vacc/driver/rtl_device.h"
#include "vacc/driver/xrt_device.h"
#include "vacc/support/error.h"

namespace vacc::driver {

std::unique_ptr<Device> open_device(const std::string &engine, const isa::HwConfig &config) {
  if (engine == "fsim") return std::make_unique<FsimDevice>(config);
  if (engine == "rtl") return std::make_unique<RtlDevice>(config);
  if (engine == "xrt") return open_xrt_device(xrt_options_from_environment(), config);
  fail("unknown engine '{}': choose fsim, rtl or xrt", engine);
}

}  // namespace vacc::driver
