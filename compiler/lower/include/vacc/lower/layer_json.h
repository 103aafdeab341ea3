// An accelerator layer and a schedule as JSON, every parameter spelled out: how `vacc tune`
// hands a layer to its worker processes and keeps its tasks in its log. layer_from_json and
// schedule_from_json throw vacc::Error naming `where` and the field at fault.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vacc/lower/operators.h"

namespace vacc::lower {

nlohmann::ordered_json to_json(const Layer &layer);
Layer layer_from_json(const nlohmann::json &j, const std::string &where);

// {"tile_h": 7, ..., "vthreads": 2, "vthread_rows": 0, "bias_once": 1, "resident": 0}
nlohmann::ordered_json to_json(const AccelSchedule &s);
AccelSchedule schedule_from_json(const nlohmann::json &j, const std::string &where);

}  // namespace vacc::lower
