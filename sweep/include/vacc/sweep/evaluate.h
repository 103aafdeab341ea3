// One (design point, workload) measured: the workload compiled for the point's config by the
// same path `vacc compile` takes (compile::compile_model; conv layers through
// bench::run_conv_layer as `vacc bench resnet18-convs` does), then run on an engine: perf
// with --timing-only for the sweep, rtl for --verify. Workers run this; the coordinator turns
// the measurement into metrics (metrics.h).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/sweep/spec.h"

namespace vacc::sweep {

// One accelerator layer of a run.
struct LayerMeasure {
  std::string name, op;
  int64_t useful_macs = 0;    // the layer's own MACs (channels as the model has them)
  int64_t executed_macs = 0;  // as the GEMM core executes them (channels padded to blocks)
  uint64_t cycles = 0;
  // With the spec's `tune`: the layer's cycles under the heuristic's schedule (cycles are the
  // tuned schedule's); 0 when the point was not tuned, or the heuristic's program has no layer
  // of this name (tuned cycles chose another folding or fusion, lower/graph_choices.h).
  uint64_t heuristic_cycles = 0;
  std::map<std::string, uint64_t> counters;
};

struct Measurement {
  std::string engine;  // "perf" (timing only) or "rtl"
  std::vector<LayerMeasure> layers;
  int64_t model_macs = 0;  // useful MACs of the whole workload, CPU steps included
  int cpu_steps = 0;       // steps that ran on the host (not counted in cycles or energy)
  double compile_s = 0, run_s = 0;
  bool tuned = false;  // the layers' schedules were tuned for this point
  double tune_s = 0;
  int64_t tune_trials = 0;  // trials measured
  // Tuned: the heuristic's program's accelerator cycles (its layers may differ from these
  // when tuned cycles chose another folding or fusion).
  uint64_t heuristic_total = 0;

  uint64_t cycles() const;
  // Tuned: heuristic_total (the layers' heuristic cycles summed, for a record without it).
  uint64_t heuristic_cycles() const;
  int64_t accel_useful_macs() const;
  std::map<std::string, uint64_t> counters() const;  // summed over the layers
};

nlohmann::json to_json(const Measurement &m);
Measurement measurement_from_json(const nlohmann::json &j);
nlohmann::json to_json(const Workload &w);
Workload workload_from_json(const nlohmann::json &j);

// Paths of a workload are relative to `base_dir` (the spec's directory) unless absolute.
std::string workload_path(const std::string &path, const std::string &base_dir);

// Measures `workload` on `engine` ("perf": timing only; "rtl"). Throws vacc::Error when the
// workload does not compile for the config or the engine rejects it.
Measurement evaluate(const isa::HwConfig &config, const Workload &workload,
                     const std::string &base_dir, const std::string &engine);

}  // namespace vacc::sweep
