#include "vacc/driver/perf_device.h"

#include "insn_spans.h"

namespace vacc::driver {

PerfDevice::PerfDevice(const isa::HwConfig &config, sim::PerfOptions options)
    : config_(config), sim_(config_, std::move(options)) {}

bool PerfDevice::record_spans(bool on) {
  sim_.set_record_slices(on);
  return true;
}

std::vector<InsnSpan> PerfDevice::spans() {
  return spans_of(sim_.slices());
}

}  // namespace vacc::driver
