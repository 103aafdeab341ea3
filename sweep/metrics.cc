#include "vacc/sweep/metrics.h"

#include "vacc/sweep/energy.h"

namespace vacc::sweep {

namespace {

uint64_t counter(const std::map<std::string, uint64_t> &c, const char *name) {
  auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

}  // namespace

nlohmann::json row_metrics(const isa::HwConfig &config, int64_t batch, double area_mm2,
                           const Measurement &m, const CoefficientTable &energy_table) {
  const double peak = static_cast<double>(config.peak_macs_per_cycle());
  nlohmann::json j;
  const uint64_t cycles = m.cycles();
  const double latency_ms = static_cast<double>(cycles) / (config.clock_mhz * 1e3);
  j["cycles"] = cycles;
  j["latency_ms"] = latency_ms;
  j["inferences_per_s"] = latency_ms > 0 ? 1e3 * static_cast<double>(batch) / latency_ms : 0.0;
  j["useful_macs"] = m.accel_useful_macs();
  int64_t executed = 0;
  for (const auto &l : m.layers) executed += l.executed_macs;
  j["executed_macs"] = executed;
  j["model_macs"] = m.model_macs;
  j["cpu_steps"] = m.cpu_steps;
  j["utilization"] =
      cycles ? static_cast<double>(m.accel_useful_macs()) / (static_cast<double>(cycles) * peak)
             : 0.0;
  const auto counters = m.counters();
  j["dram_bytes"] = counter(counters, "dram_read_bytes") + counter(counters, "dram_write_bytes");

  EnergyBreakdown total;
  nlohmann::json layers = nlohmann::json::array();
  for (const auto &l : m.layers) {
    total += estimate_energy(config, l.counters, area_mm2, energy_table);
    const uint64_t dram =
        counter(l.counters, "dram_read_bytes") + counter(l.counters, "dram_write_bytes");
    layers.push_back({{"name", l.name},
                      {"op", l.op},
                      {"cycles", l.cycles},
                      {"useful_macs", l.useful_macs},
                      {"executed_macs", l.executed_macs},
                      {"utilization", l.cycles ? static_cast<double>(l.useful_macs) /
                                                     (static_cast<double>(l.cycles) * peak)
                                               : 0.0},
                      {"dram_bytes", dram}});
  }
  constexpr double kPjPerUj = 1e6;
  j["energy_uj"] = total.total() / kPjPerUj;
  j["energy_mac_uj"] = total.mac / kPjPerUj;
  j["energy_alu_uj"] = total.alu / kPjPerUj;
  j["energy_sram_uj"] = total.sram / kPjPerUj;
  j["energy_dram_uj"] = total.dram / kPjPerUj;
  j["energy_leakage_uj"] = total.leakage / kPjPerUj;
  j["edp_uj_ms"] = total.total() / kPjPerUj * latency_ms;
  j["layers"] = layers;
  j["compile_s"] = m.compile_s;
  j["run_s"] = m.run_s;
  if (m.tuned) {
    // The same point under the heuristic's schedules: how much of its ranking was the software.
    const uint64_t heuristic = m.heuristic_cycles();
    j["heuristic_cycles"] = heuristic;
    j["heuristic_latency_ms"] = static_cast<double>(heuristic) / (config.clock_mhz * 1e3);
    j["tuning_gain"] = cycles ? static_cast<double>(heuristic) / static_cast<double>(cycles) : 1.0;
    j["tune_trials"] = m.tune_trials;
    j["tune_s"] = m.tune_s;
  }
  return j;
}

}  // namespace vacc::sweep
