// The host protocol of DESIGN.md, the same for every device.
#include "vacc/driver/device.h"
#include "vacc/driver/registers.h"
#include "vacc/support/error.h"

namespace vacc::driver {

RunResult run_program(Device &device, const isa::Program &program, double timeout_seconds) {
  const uint64_t base = device.allocate(program.dram.size());
  device.write_memory(base, program.dram.data(), program.dram.size());
  device.write_register(reg::kInsnCount, program.insn_count);
  device.write_register(reg::kBaseLow, static_cast<uint32_t>(base));
  device.write_register(reg::kBaseHigh, static_cast<uint32_t>(base >> 32));
  device.write_register(reg::kInsnOffset, static_cast<uint32_t>(program.insn_offset));
  device.write_register(reg::kControl, reg::kControlStart);
  device.wait(timeout_seconds);
  RunResult result;
  result.dram.resize(program.dram.size());
  device.read_memory(base, result.dram.data(), result.dram.size());
  result.counters = device.counters();
  return result;
}

}  // namespace vacc::driver
