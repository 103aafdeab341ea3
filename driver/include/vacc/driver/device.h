// One device interface for every engine (fsim, rtl, xrt): device memory, registers, start
// and wait. The runtime and `vacc sim` talk only to this; run_program() is the host protocol.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/program.h"

namespace vacc::driver {

// Named counters an engine reports after a run (instructions per engine, MACs, bytes per
// memory, cycles, busy/stall cycles...). Ordered so printing is deterministic.
using Counters = std::map<std::string, uint64_t>;

// When one instruction ran, in cycles from the start of the run.
struct InsnSpan {
  uint64_t start = 0, end = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;  // "fsim", "perf", "rtl", "xrt"

  // Device memory: one arena of `bytes` bytes; returns its device address (the base).
  virtual uint64_t allocate(uint64_t bytes) = 0;
  virtual void write_memory(uint64_t address, const uint8_t *data, uint64_t bytes) = 0;
  virtual void read_memory(uint64_t address, uint8_t *data, uint64_t bytes) = 0;

  virtual void write_register(uint32_t offset, uint32_t value) = 0;
  virtual uint32_t read_register(uint32_t offset) = 0;

  // Waits until the control register reports done; throws vacc::Error on a device error
  // (deadlock, illegal instruction, time-out) with a message naming the instruction.
  virtual void wait(double timeout_seconds) = 0;

  // Counters of the last run, including those only a simulator can see.
  virtual Counters counters() = 0;

  // Engines that time each instruction (rtl, perf): keep, for every run from now on, when each
  // instruction ran (spans()); false where the engine does not (fsim, xrt).
  virtual bool record_spans(bool on) {
    (void)on;
    return false;
  }
  // The last run's span of each instruction, by program index: its first and last cycle on
  // any of its tracks (sim::InsnSlice); empty when none were recorded.
  virtual std::vector<InsnSpan> spans() { return {}; }
};

// Settings of the engines that have any; each engine reads its own and ignores the rest.
struct DeviceOptions {
  // xrt: the xclbin holding vacc_top and the card (index or PCIe BDF); empty: taken from
  // VACC_XCLBIN / VACC_XRT_DEVICE.
  std::string xclbin;
  std::string xrt_device;
  // rtl, perf: a Perfetto timeline of the run (empty: none); rtl: an FST waveform. Every
  // simulator: the cycle after which a run that has not finished is stopped (unset: the
  // default, sim::kDefaultCycleLimit; 0: none); fsim counts operations instead of cycles
  // (sim::FsimOptions::op_limit).
  std::string wave_path;
  std::string timeline_path;
  std::optional<uint64_t> cycle_limit;
  // perf: count cycles without computing the data (sim::PerfOptions::timing_only); the device
  // memory keeps its input.
  bool timing_only = false;
  // rtl: a config whose hardware has no model built into vacc gets one built into the model
  // cache (minutes, once); false: only a cached one is used, else it is refused (--no-build).
  bool build_rtl_model = true;
  // fsim: run the latest of the instructions its tokens let run first
  // (sim::FsimOptions::latest_first), to check that a program's results rest on its tokens.
  bool fsim_latest_first = false;
};

// Opens a device by engine name ("fsim", "perf", "rtl", "xrt"); throws vacc::Error if unknown.
std::unique_ptr<Device> open_device(const std::string &engine, const isa::HwConfig &config,
                                    const DeviceOptions &options = {});

struct RunResult {
  std::vector<uint8_t> dram;  // the device memory image after the run
  Counters counters;
};

// The host protocol of DESIGN.md: copy the image in, write instruction count, base and
// instruction offset, start, wait for done, copy the image back.
RunResult run_program(Device &device, const isa::Program &program, double timeout_seconds = 600);

}  // namespace vacc::driver
