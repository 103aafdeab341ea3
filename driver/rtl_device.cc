#include "vacc/driver/rtl_device.h"

namespace vacc::driver {

RtlDevice::RtlDevice(const isa::HwConfig &config, sim::RtlOptions options)
    : sim_(config, std::move(options)) {}

Counters RtlDevice::counters() {
  Counters c;
  for (const auto &[name, value] : sim_.counters()) c[name] = value;
  return c;
}

}  // namespace vacc::driver
