// After the workers: the resource model refitted with any Yosys results this sweep got
// (--synth; those points then carry Yosys' own counts), every point's hardware figures
// refreshed, one results row per (point, workload) derived (metrics.h; rtl cycles and perf's
// error where verified), Pareto fronts marked per workload (latency vs area, latency vs
// energy), and DIR/results.csv, DIR/results.json and DIR/report.html written (each replaced
// atomically, so another process reading them never sees half a file).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vacc/sweep/coefficients.h"
#include "vacc/sweep/resources.h"
#include "vacc/sweep/spec.h"
#include "vacc/sweep/store.h"

namespace vacc::sweep {

struct FinalizeInputs {
  const SweepSpec &spec;
  std::string out_dir;
  const CoefficientTable &energy_table;
  const CoefficientTable &area_table;
  bool report = true;
};

struct SweepSummary {
  nlohmann::json json;
  std::string text;
  nlohmann::ordered_json results;  // the document written to DIR/results.json
};

// Yosys results of this sweep's synthesized points, as fit samples.
std::vector<SynthSample> synth_samples(Store &store);
// The model fitted to `bundled` plus this sweep's Yosys results.
ResourceModel fit_with_synth_results(Store &store, const std::vector<SynthSample> &bundled);

SweepSummary finalize_sweep(Store &store, const FinalizeInputs &inputs);

// Writes `text` to `path` through a temporary file and a rename.
void write_atomically(const std::string &path, const std::string &text);

}  // namespace vacc::sweep
