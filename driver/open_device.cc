// The one place that knows every device implementation.
#include "vacc/driver/device.h"

#include "fsim_device.h"
#include "vacc/driver/perf_device.h"
#include "vacc/driver/rtl_device.h"
#include "vacc/driver/xrt_device.h"
#include "vacc/support/error.h"

namespace vacc::driver {

std::unique_ptr<Device> open_device(const std::string &engine, const isa::HwConfig &config,
                                    const DeviceOptions &options) {
  // Every simulator stops at the default limit unless told otherwise: no input hangs one.
  const uint64_t limit = options.cycle_limit.value_or(sim::kDefaultCycleLimit);
  if (engine == "fsim")
    return std::make_unique<FsimDevice>(config, limit, options.fsim_latest_first);
  if (engine == "perf") {
    sim::PerfOptions perf;
    perf.timeline_path = options.timeline_path;
    perf.cycle_limit = limit;
    perf.timing_only = options.timing_only;
    return std::make_unique<PerfDevice>(config, perf);
  }
  if (engine == "rtl") {
    sim::RtlOptions rtl;
    rtl.wave_path = options.wave_path;
    rtl.timeline_path = options.timeline_path;
    rtl.cycle_limit = limit;
    rtl.build_model = options.build_rtl_model;
    return std::make_unique<RtlDevice>(config, rtl);
  }
  if (engine == "xrt") return open_xrt_device(xrt_options(options.xclbin, options.xrt_device), config);
  fail("unknown engine '{}': choose fsim, perf, rtl or xrt", engine);
}

}  // namespace vacc::driver
