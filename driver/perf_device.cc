#include "vacc/driver/perf_device.h"

namespace vacc::driver {

PerfDevice::PerfDevice(const isa::HwConfig &config, sim::PerfOptions options)
    : config_(config), sim_(config_, std::move(options)) {}

}  // namespace vacc::driver
