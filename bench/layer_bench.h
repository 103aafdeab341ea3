// The conv-layer benchmark behind `vacc bench resnet18-convs`: each layer is compiled for
// the accelerator with its default schedule (C1's 3 input channels folded im2col-style into
// the reduction), run through the runtime on an engine with random int8 data, and checked
// bit for bit against a plain C++ convolution. Figures per layer: MACs, cycles (engines with
// a cycle counter), compute utilization MACs / (cycles x peak MACs per cycle), and the
// roofline-attainable utilization at the config's DRAM bandwidth, both for the bytes the
// schedule moves and for the compulsory bytes (each tensor once).
// For looking into a layer: VACC_BENCH_DUMP=DIR writes DIR/<layer>.txt (the command list as
// text), VACC_BENCH_TIMELINE=DIR writes DIR/<layer>.json (rtl, perf: a Chrome-trace timeline).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/lower/operators.h"

namespace vacc::driver {
class Device;
}

namespace vacc::bench {

struct ConvLayerSpec {
  std::string name;
  int64_t h = 0, w = 0, ic = 0, oc = 0, k = 1, stride = 1, pad = 0;
};

// The layers of bench/resnet18_convs.yaml, embedded at build time.
std::vector<ConvLayerSpec> resnet18_convs();
// Parses a layer table in that format; throws vacc::Error naming `source` and the layer.
std::vector<ConvLayerSpec> parse_conv_layers(const std::string &yaml_text,
                                             const std::string &source);


struct LayerBenchOptions {
  std::string engine = "fsim";
  // perf: count cycles without computing data; outputs are then not checked.
  bool timing_only = false;
  // rtl: build a model on demand for a config without one (driver::DeviceOptions).
  bool build_rtl_model = true;
  // Run on this device instead of opening `engine` (e.g. one that records its timeline).
  driver::Device *device = nullptr;
  int vthreads = 2;
  uint32_t seed = 1;
  bool fold = true;  // fold the kernel window of few-channel layers into the reduction
  // The schedule to run (a tuned one); unset: the default schedule for `vthreads`.
  std::optional<lower::AccelSchedule> schedule;
};

struct LayerResult {
  std::string name;
  bool folded = false;
  std::string schedule;        // "tile 14x14 oc 2 ic 4 vt 2"
  uint64_t macs = 0;           // of the layer itself
  uint64_t executed_macs = 0;  // GEMM MACs incl. channel padding (engine counter or model)
  std::optional<uint64_t> cycles;
  double utilization = 0;        // MACs / (cycles * peak); 0 without cycles
  uint64_t moved_bytes = 0;      // DMA data + micro-ops + instructions, as scheduled
  uint64_t compulsory_bytes = 0; // input + weights + bias + output, once each
  double roofline = 0;           // attainable utilization for moved_bytes
  double roofline_compulsory = 0;
  uint64_t insns = 0;
  double compile_s = 0, run_s = 0;
  uint64_t mismatches = 0;  // outputs that differ from the reference (must be 0)
  uint64_t outputs = 0;     // compared outputs (0: not checked, a timing-only run)
  std::map<std::string, uint64_t> counters;  // the engine's counters of the run
};

// The plain conv layer of `spec` (channels not yet padded; the requantization shift that
// spreads its outputs over int8), and the accelerator layer the benchmark lowers for it:
// blocked, or folded im2col-style when `fold` and lower::should_fold say so. Throws vacc::Error
// naming the layer when its kernel is larger than its padded input.
lower::Conv2dParams plain_conv_params(const ConvLayerSpec &spec);
lower::Conv2dParams accel_conv_params(const isa::HwConfig &config, const ConvLayerSpec &spec,
                                      bool fold);

// Runs one layer; throws vacc::Error on a compile or device error. A mismatch is reported
// in the result (the caller turns it into an error after printing).
LayerResult run_conv_layer(const isa::HwConfig &config, const ConvLayerSpec &layer,
                           const LayerBenchOptions &options);

}  // namespace vacc::bench
