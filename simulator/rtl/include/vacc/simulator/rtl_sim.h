// rtl: the cycle-accurate simulator. The accelerator's own SystemVerilog (hw/, `vacc_top`),
// verilated for the config, runs inside a SystemC system with a host that drives the
// AXI4-Lite register map exactly as a real host does (isa/include/vacc/isa/registers.h)
// and an AXI4 device memory with the config's latency and bandwidth (axi_memory.h).
//
// One RtlSim is one board: device memory, registers, and the model, which keeps its state
// between runs like the hardware does. Which Verilated model runs is chosen from the config's
// hardware (the generated SystemVerilog package: memory timing and clock do not count) at run
// time: one built into this binary (CMake builds the bundled configs; rtl_model_names() lists
// them), else one from the per-user model cache, which builds it on demand the first time
// (minutes; simulator/rtl/README.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/simulator/timeline.h"

namespace vacc::sim {

// Cycles after which a run that has not finished is stopped by the RTL and reported as a
// deadlock; generous enough for every bundled program.
inline constexpr uint64_t kDefaultCycleLimit = 200'000'000;

struct RtlOptions {
  uint64_t cycle_limit = kDefaultCycleLimit;  // written to register 0x54; 0 = none
  std::string wave_path;                      // FST waveform of the whole run, if set
  std::string timeline_path;                  // Chrome-trace/Perfetto JSON, if set
  bool record_slices = false;                 // keep slices() even without a timeline file
  uint64_t poll_interval_cycles = 256;        // how often the host reads the control register
  int max_outstanding = 8;                    // AXI bursts in flight, each direction
  std::string model;                          // force a model by name ("" = by config)
  // A config whose hardware has no model built into vacc: build one into the model cache
  // (minutes, once per hardware), or when false use only one already cached (--no-build).
  bool build_model = true;
  std::string cache_dir;  // the model cache; "" = $VACC_CACHE_DIR/rtl (support/cache_dir.h)
  // Progress of a model build, one line at a time; unset: printed on stderr.
  std::function<void(const std::string &)> progress;
};

class RtlSim {
 public:
  // Throws vacc::Error when there is no model for `config` and it cannot (or may not) be
  // built; the message names the step that failed and its log.
  explicit RtlSim(const isa::HwConfig &config, RtlOptions options = {});
  ~RtlSim();
  RtlSim(const RtlSim &) = delete;
  RtlSim &operator=(const RtlSim &) = delete;

  // Device memory: one arena at a fixed device address above 4 GiB (so the base registers'
  // high word is exercised); returns that address.
  uint64_t allocate(uint64_t bytes);
  void write_memory(uint64_t address, const uint8_t *data, uint64_t bytes);
  void read_memory(uint64_t address, uint8_t *data, uint64_t bytes);

  // One AXI4-Lite transaction each, in simulated time. Writing the start bit of the control
  // register also programs the cycle limit first and arms the timeline and waveform.
  void write_register(uint32_t offset, uint32_t value);
  uint32_t read_register(uint32_t offset);

  // Polls the control register like a host until done. Throws vacc::Error on an illegal
  // instruction (naming its index), a deadlock / cycle limit (naming the waiting engines and
  // their instructions), an access outside device memory, or when `timeout_seconds` of wall
  // time pass. Writes the timeline when one was asked for.
  void wait(double timeout_seconds = 600);

  // Cycles and busy/stall counters of the last run (registers 0x28..0x48), plus the memory
  // model's traffic and the simulator's own speed.
  std::map<std::string, uint64_t> counters();
  // The last run's per-instruction slices (with record_slices or a timeline path).
  const std::vector<InsnSlice> &slices() const { return slices_; }
  void set_record_slices(bool on);

  // The whole host protocol in one call: image in, registers, start, wait, image out.
  // `dram` is the device-memory image (offsets from the base), modified in place.
  void run(std::vector<uint8_t> &dram, uint64_t insn_offset, uint32_t insn_count);

  // The model in use.
  std::string model_name() const;
  bool model_is_standin() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<InsnSlice> slices_;
};

// Names of the configs whose models are built into this binary.
std::vector<std::string> rtl_model_names();
// Whether a model for `config`'s hardware is built into this binary (and whether it is the
// stand-in). Models in the cache do not count.
bool rtl_model_available(const isa::HwConfig &config);
bool rtl_model_standin(const isa::HwConfig &config);

}  // namespace vacc::sim
