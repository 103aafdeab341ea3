// Measuring one schedule of one layer: checked against the operator's rules, lowered, run on the
// perf engine counting cycles only (the RTL's cycles, without computing data). What `vacc tune`
// does for each candidate, in its own process or in a worker process.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vacc/isa/config.h"
#include "vacc/lower/operators.h"
#include "vacc/tuning/trial.h"

namespace vacc::tune {

// The trial of `schedule` for `layer`: cycles, or the rule it breaks or the lowering error as its
// error. `engine` runs the program on a device of its own (a device holds one session):
// "perf" counting cycles only, as tuning measures, or "rtl" to verify.
tuning::Trial measure(const isa::HwConfig &config, const lower::Layer &layer,
                      const lower::AccelSchedule &schedule, const std::string &engine = "perf");

// The same, as a worker process receives it: {"config_yaml", "layer", "schedule"}, and the
// trial as JSON.
nlohmann::json measure_request(const isa::HwConfig &config, const lower::Layer &layer,
                               const lower::AccelSchedule &schedule);
nlohmann::json run_measure_request(const nlohmann::json &request);

}  // namespace vacc::tune
