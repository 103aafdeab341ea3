#include "fsim_device.h"

namespace vacc::driver {

FsimDevice::FsimDevice(const isa::HwConfig &config, uint64_t op_limit, bool latest_first)
    : config_(config),
      fsim_(config_, sim::FsimOptions{.op_limit = op_limit, .latest_first = latest_first}) {}

Counters FsimDevice::counters() {
  const sim::FsimStats &s = fsim_.stats();
  Counters c;
  for (int e = 0; e < isa::kNumEngines; ++e)
    c[std::string("insns_") + isa::engine_name(static_cast<isa::Engine>(e))] = s.insns[e];
  c["gemm_uops"] = s.gemm_uops;
  c["macs"] = s.macs;
  c["alu_ops"] = s.alu_ops;
  for (int m = 0; m < isa::kNumMemIds; ++m) {
    const std::string name = isa::mem_id_name(static_cast<isa::MemId>(m));
    if (s.load_bytes[m]) c["load_bytes_" + name] = s.load_bytes[m];
    if (s.store_bytes[m]) c["store_bytes_" + name] = s.store_bytes[m];
  }
  return c;
}

}  // namespace vacc::driver
