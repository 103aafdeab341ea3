// The boundary between the simulator and one Verilated model of `vacc_top`. Each config's
// model is a different C++ class (Verilator prefix keyed by the config's hash); RtlCore<V>
// (rtl_core.h) adapts one to this interface. The build lists every model it compiled in a
// generated table (models.cc); a model built on demand is a shared library exporting one
// symbol, kLoadableModelSymbol, that returns its LoadableModel (model_cache.h). One virtual
// call runs a whole batch of cycles, so the per-cycle loop is monomorphic and inlined.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vacc/simulator/axi_memory.h"
#include "vacc/simulator/rtl_tracks.h"

namespace vacc::sim {

// One AXI4-Lite transaction of the host, played cycle by cycle on s_axi_control_*.
struct LiteTransaction {
  bool write = false;
  uint32_t addr = 0;
  uint32_t data = 0;  // write data in, read data out
  uint32_t resp = 0;
  bool done = false;
};

// Per-instruction events read from the model's trace signals (see hw/README.md).
struct InsnEvent {
  uint64_t cycle = 0;
  uint8_t track = 0;   // 0 load, 1 compute, 2 store, kGemmUnitTrack, kAluUnitTrack
  bool start = false;  // start or end
};

struct EngineProgress {
  std::array<uint64_t, 3> started{};
  std::array<uint64_t, 3> ended{};
  uint64_t gemm_mac_uops = 0;    // accumulating micro-ops through the GEMM core (trace_gemm_mac)
  bool run_started = false;      // trace_run_start pulsed (the RTL exposes it)
  uint64_t run_start_cycle = 0;  // the cycle it pulsed in: cycle 0 of the run's counters
};

class RtlModel {
 public:
  virtual ~RtlModel() = default;

  // Holds ap_rst_n low for a few cycles.
  virtual void reset() = 0;
  // Starts a host transaction; it completes during run().
  virtual void begin_transaction(LiteTransaction *txn) = 0;
  // Runs up to `max_cycles` clock cycles; returns early (after the cycle in which it
  // happened) when the current host transaction completes. Returns the cycles run.
  virtual uint64_t run(uint64_t max_cycles) = 0;
  virtual uint64_t cycle() const = 0;
  virtual bool interrupt() const = 0;

  // FST waveform of every signal; costs nothing unless opened.
  virtual void open_wave(const std::string &path, double period_ns) = 0;
  virtual void close_wave() = 0;

  // Whether the RTL exposes per-instruction trace signals (per engine; per compute unit),
  // and the MAC trace bit.
  virtual bool has_insn_events() const = 0;
  virtual bool has_unit_events() const = 0;
  virtual bool has_mac_trace() const = 0;
  // Records every event into `events` when non-null (for a timeline).
  virtual void record_events(std::vector<InsnEvent> *events) = 0;
  virtual const EngineProgress &progress() const = 0;
  virtual void clear_progress() = 0;
};

// A model compiled into this binary, for the config whose YAML text it was built from.
struct ModelEntry {
  const char *name;         // the config's name, e.g. "default"
  const char *hash;         // hash of the config text (also the Verilator prefix suffix)
  const char *config_yaml;  // the config it was built from
  bool standin;             // built from the test stand-in, not the accelerator
  // `bus_bytes`: memory.bus_bits / 8 of the config.
  std::unique_ptr<RtlModel> (*make)(AxiMemory &memory, int bus_bytes);
};

// What a model library built on demand exports (model_entry.cc.in, VACC_RTL_LOADABLE): the
// versioned symbol returns a pointer to this. The library carries its own copies of the
// Verilator runtime, AxiMemory and RtlCore, compiled from the model kit this binary embeds
// (model_kit.h), and exports nothing else, so it coexists with the models linked into the
// binary. Change kLoadableModelAbi and the symbol's suffix together whenever this struct,
// ModelEntry or the objects they pass change in a way the cache key cannot see.
inline constexpr int kLoadableModelAbi = 1;
#define VACC_RTL_LOADABLE_SYMBOL vacc_rtl_model_v1
inline constexpr const char *kLoadableModelSymbol = "vacc_rtl_model_v1";
struct LoadableModel {
  int abi;          // kLoadableModelAbi of the kit it was built from
  const char *key;  // the cache key it was built for (model_key.h)
  ModelEntry entry;
};

// Every model linked into this binary: the table CMake generates (models.cc) plus any
// registered with add_model_entry() before the first RtlSim is created.
const std::vector<ModelEntry> &model_entries();
// Adds a model that is not in the generated table (the test stand-in); selected by name only.
void add_model_entry(const ModelEntry &entry);
// The generated table (models.cc).
const std::vector<ModelEntry> &built_model_entries();

}  // namespace vacc::sim
