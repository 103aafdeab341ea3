// The server's per-run wall-time limit, as a device that wraps the engine's (see server.h).
#pragma once

#include <memory>

#include "vacc/driver/device.h"

namespace vacc::remote {

// `device`, with every run from its first start on bounded by `seconds` of wall time (0: the
// device itself): a wait gets at most the time left, and a start after the limit, or a wait
// that fails after it, throws vacc::Error naming the limit (--run-time-limit).
std::unique_ptr<driver::Device> limit_run_time(std::unique_ptr<driver::Device> device,
                                               double seconds);

}  // namespace vacc::remote
