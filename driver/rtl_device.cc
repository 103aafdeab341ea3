#include "vacc/driver/rtl_device.h"

#include "insn_spans.h"

namespace vacc::driver {

RtlDevice::RtlDevice(const isa::HwConfig &config, sim::RtlOptions options)
    : sim_(config, std::move(options)) {}

Counters RtlDevice::counters() {
  Counters c;
  for (const auto &[name, value] : sim_.counters()) c[name] = value;
  return c;
}

bool RtlDevice::record_spans(bool on) {
  sim_.set_record_slices(on);
  return true;
}

std::vector<InsnSpan> RtlDevice::spans() {
  return spans_of(sim_.slices());
}

}  // namespace vacc::driver
