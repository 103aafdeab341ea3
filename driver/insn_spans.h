// Per-instruction spans (Device::spans()) from the per-track slices the timing engines record.
#pragma once

#include <vector>

#include "vacc/driver/device.h"
#include "vacc/simulator/timeline.h"

namespace vacc::driver {

std::vector<InsnSpan> spans_of(const std::vector<sim::InsnSlice> &slices);

}  // namespace vacc::driver
