#include "fsim_device.h"

#include "vacc/driver/registers.h"
#include "vacc/support/error.h"

namespace vacc::driver {

FsimDevice::FsimDevice(const isa::HwConfig &config) : config_(config), fsim_(config_) {}

uint64_t FsimDevice::allocate(uint64_t bytes) {
  if (!memory_.empty()) fail("fsim device: device memory is already allocated");
  memory_.assign(bytes, 0);
  return kArenaBase;
}

void FsimDevice::check_range(uint64_t address, uint64_t bytes) const {
  if (address < kArenaBase || address - kArenaBase + bytes > memory_.size())
    fail("fsim device: access [{:#x}, {:#x}) is outside device memory [{:#x}, {:#x})", address,
         address + bytes, kArenaBase, kArenaBase + memory_.size());
}

void FsimDevice::write_memory(uint64_t address, const uint8_t *data, uint64_t bytes) {
  check_range(address, bytes);
  std::copy(data, data + bytes, memory_.begin() + (address - kArenaBase));
}

void FsimDevice::read_memory(uint64_t address, uint8_t *data, uint64_t bytes) {
  check_range(address, bytes);
  std::copy(memory_.begin() + (address - kArenaBase),
            memory_.begin() + (address - kArenaBase + bytes), data);
}

void FsimDevice::write_register(uint32_t offset, uint32_t value) {
  if (offset == reg::kControl) {
    if (value & reg::kControlStart) start();
    return;
  }
  registers_[offset] = value;
}

uint32_t FsimDevice::read_register(uint32_t offset) {
  if (offset == reg::kControl) {
    uint32_t v = reg::kControlIdle | reg::kControlReady | (done_ ? reg::kControlDone : 0);
    done_ = false;  // done clears on read, as ap_ctrl_hs does
    return v;
  }
  auto it = registers_.find(offset);
  return it == registers_.end() ? 0 : it->second;
}

void FsimDevice::start() {
  error_.reset();
  const uint64_t base = (uint64_t{registers_[reg::kBaseHigh]} << 32) | registers_[reg::kBaseLow];
  if (base != kArenaBase)
    fail("fsim device: base address {:#x} is not the allocated device memory {:#x}", base,
         kArenaBase);
  try {
    fsim_.run(memory_, registers_[reg::kInsnOffset], registers_[reg::kInsnCount]);
  } catch (const Error &e) {
    error_ = e.what();
  }
  done_ = true;
}

void FsimDevice::wait(double) {
  // fsim runs to completion inside start(); report what it found.
  if (error_) fail("{}", *error_);
}

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
