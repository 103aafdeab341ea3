#include "vacc/tune/measure.h"

#include <chrono>
#include <memory>

#include "vacc/driver/device.h"
#include "vacc/isa/config_yaml.h"
#include "vacc/lower/layer_json.h"
#include "vacc/lower/lower.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/runtime/replay.h"
#include "vacc/support/error.h"

namespace vacc::tune {

tuning::Trial measure(const isa::HwConfig &config, const lower::Layer &layer,
                      const lower::AccelSchedule &schedule, const std::string &engine) {
  const auto start = std::chrono::steady_clock::now();
  tuning::Trial t;
  t.hw = tuning::hw_key(config);
  t.config = config.name;
  t.workload = lower::workload_key(layer);
  t.schedule = schedule;
  if (std::optional<std::string> why = lower::check_schedule(config, layer, schedule)) {
    t.error = "refused: " + *why;
    return t;
  }
  try {
    lower::LowerOptions lo;
    lo.schedule = schedule;
    lo.verify = false;
    const lower::LoweredLayer lowered = lower::lower(config, layer, lo);
    // Timing does not depend on the data: the buffers start as zeros.
    driver::DeviceOptions o;
    o.timing_only = engine == "perf";
    const std::unique_ptr<driver::Device> device = driver::open_device(engine, config, o);
    const runtime::ListRun run = runtime::run_command_list(
        *device, config, lowered.commands,
        std::vector<std::vector<uint8_t>>(lowered.commands.buffers.size()));
    const auto it = run.counters.find("cycles");
    if (it == run.counters.end() || it->second == 0)
      fail("the engine counted no cycles");
    t.cycles = it->second;
  } catch (const Error &e) {
    t.error = e.what();
  }
  t.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return t;
}

nlohmann::json measure_request(const isa::HwConfig &config, const lower::Layer &layer,
                               const lower::AccelSchedule &schedule) {
  return {{"config_yaml", isa::to_yaml(config)},
          {"layer", lower::to_json(layer)},
          {"schedule", lower::to_json(schedule)}};
}

nlohmann::json run_measure_request(const nlohmann::json &request) {
  if (!request.is_object() || !request.contains("config_yaml") ||
      !request["config_yaml"].is_string() || !request.contains("layer") ||
      !request.contains("schedule"))
    fail("tuning request: expected an object with config_yaml, layer and schedule");
  const isa::HwConfig config =
      isa::parse_config(request["config_yaml"].get<std::string>(), "tuning request config");
  const lower::Layer layer = lower::layer_from_json(request["layer"], "tuning request layer");
  const lower::AccelSchedule s =
      lower::schedule_from_json(request["schedule"], "tuning request schedule");
  return tuning::to_json(measure(config, layer, s));
}

}  // namespace vacc::tune
