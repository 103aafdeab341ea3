// Calibration of the perf engine against the rtl engine (`vacc calibrate`): the same workload
// on both, per run the cycles of each, the relative error, the first instruction whose start
// cycle differs between their timelines, the wall time of each, and whether both left the same
// device memory. Workloads: progen's random programs, the ResNet-18 conv layers of
// `vacc bench resnet18-convs`, and whole models through the graph executor (one row per
// accelerator step).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/simulator/timeline_compare.h"

namespace vacc::cli {

struct CalibrationRow {
  std::string group;     // "progen", "convs", or the model's file name
  std::string workload;  // "seed 12", "C2", "step 3 conv1 (vacc.QConv)"
  uint64_t rtl_cycles = 0, perf_cycles = 0;
  std::optional<sim::Divergence> divergence;  // none: every start cycle agrees
  double rtl_seconds = 0, perf_seconds = 0;
  bool same_memory = true;  // both engines left identical device memory

  double error() const {
    return rtl_cycles ? (double(perf_cycles) - double(rtl_cycles)) / double(rtl_cycles) : 0;
  }
};

// Each takes `build_rtl_model`: whether the rtl engine may build a model on demand
// (sim::RtlOptions::build_model).
// Random programs progen::generate_program(config, seed) for seeds [start, start + count).
std::vector<CalibrationRow> calibrate_progen(const isa::HwConfig &config, uint64_t start,
                                             uint64_t count, bool build_rtl_model);
// The ResNet-18 conv layers (all, or those named), two virtual threads, as the benchmark runs
// them.
std::vector<CalibrationRow> calibrate_convs(const isa::HwConfig &config,
                                            const std::vector<std::string> &layers,
                                            bool build_rtl_model);
// A model (.onnx compiled for `config`, or a .vpkg), on one input: the bundled sample for the
// bundled model, else seeded noise of the input's shape (timing does not depend on data).
std::vector<CalibrationRow> calibrate_model(const isa::HwConfig &config, const std::string &path,
                                            bool build_rtl_model);

// "insn 41 on compute: GEMM, rtl 812 perf 815", or "-" for none.
std::string describe_divergence(const std::optional<sim::Divergence> &d);

}  // namespace vacc::cli
