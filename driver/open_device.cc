// The one place that knows every device implementation.
#include "vacc/driver/device.h"

#include "fsim_device.h"
#include "vacc/support/error.h"

namespace vacc::driver {

std::unique_ptr<Device> open_device(const std::string &engine, const isa::HwConfig &config) {
  if (engine == "fsim") return std::make_unique<FsimDevice>(config);
  fail("unknown engine '{}': choose fsim", engine);
}

}  // namespace vacc::driver
