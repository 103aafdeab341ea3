// The figures of one (point, workload) row, from the point's config and area and the run's
// measurement (evaluate.h):
//   cycles            the accelerator's cycle counter summed over its layers (perf = rtl's)
//   latency_ms        cycles at the config's clock; inferences_per_s = batch / latency
//   utilization       the layers' useful MACs (the model's own, not channel padding) over
//                     cycles x peak MACs per cycle
//   dram_bytes        bytes read and written by the accelerator
//   energy_*_uj       energy.h, per inference, split by component; edp_uj_ms = energy x latency
//   layers            per layer: cycles, useful MACs, utilization, DRAM bytes
//   heuristic_cycles  with the spec's `tune`: the cycles under the heuristic's schedules (cycles
//                     are the tuned ones), heuristic_latency_ms, tuning_gain = heuristic/tuned
// Steps that run on the host CPU are counted in cpu_steps and are in none of the figures.
#pragma once

#include <nlohmann/json.hpp>

#include "vacc/isa/config.h"
#include "vacc/sweep/coefficients.h"
#include "vacc/sweep/evaluate.h"

namespace vacc::sweep {

nlohmann::json row_metrics(const isa::HwConfig &config, int64_t batch, double area_mm2,
                           const Measurement &m, const CoefficientTable &energy_table);

}  // namespace vacc::sweep
