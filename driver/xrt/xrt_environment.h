// Private to the xrt device: the message for "XRT works but sees no device".
#pragma once

#include <string>

#include "vacc/driver/xrt_device.h"

namespace vacc::driver {

std::string xrt_no_device_message();

}  // namespace vacc::driver
