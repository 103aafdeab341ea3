#include "vacc/tuning/trial.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <ostream>

#include "vacc/lower/layer_json.h"
#include "vacc/support/error.h"

namespace vacc::tuning {

std::string hw_key(const isa::HwConfig &config) {
  // FNV-1a over the ISA's fingerprint and everything else the cycles depend on: the bus, the
  // DRAM model and the queue depths (not the clock, the DSP packing or the FPGA part).
  uint64_t h = config.isa_fingerprint();
  for (int64_t v : {config.bus_bits, config.mem_latency_cycles, config.mem_bytes_per_cycle,
                    config.insn_queue_depth, config.token_queue_depth}) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return fmt::format("{:016x}", h);
}

nlohmann::ordered_json to_json(const Trial &t) {
  nlohmann::ordered_json j = {{"hw", t.hw},
                              {"config", t.config},
                              {"workload", t.workload},
                              {"schedule", lower::to_json(t.schedule)},
                              {"heuristic", t.heuristic}};
  if (t.cycles) j["cycles"] = *t.cycles;
  j["error"] = t.error;
  j["strategy"] = t.strategy;
  j["trial"] = t.trial;
  j["seconds"] = std::round(t.seconds * 1e4) / 1e4;
  return j;
}

Trial trial_from_json(const nlohmann::json &j, const std::string &where) {
  if (!j.is_object()) fail("{}: expected a JSON object (one trial per line)", where);
  auto text = [&](const char *key) {
    if (!j.contains(key) || !j.at(key).is_string())
      fail("{}: field '{}' must be a string", where, key);
    return j.at(key).get<std::string>();
  };
  Trial t;
  t.hw = text("hw");
  if (t.hw.size() != 16 || t.hw.find_first_not_of("0123456789abcdef") != std::string::npos)
    fail("{}: field 'hw' = '{}' must be 16 hex digits (a config's hardware key)", where,
         t.hw);
  t.config = j.contains("config") && j["config"].is_string() ? j["config"].get<std::string>() : "";
  t.workload = text("workload");
  if (!j.contains("schedule")) fail("{}: field 'schedule' is missing", where);
  t.schedule = lower::schedule_from_json(j.at("schedule"), where + ": field 'schedule'");
  if (j.contains("heuristic")) {
    if (!j["heuristic"].is_boolean()) fail("{}: field 'heuristic' must be true or false", where);
    t.heuristic = j["heuristic"].get<bool>();
  }
  if (j.contains("cycles") && !j["cycles"].is_null()) {
    if (!j["cycles"].is_number_unsigned() || j["cycles"].get<uint64_t>() == 0)
      fail("{}: field 'cycles' must be a positive integer", where);
    t.cycles = j["cycles"].get<uint64_t>();
  }
  if (j.contains("error")) t.error = text("error");
  if (!t.cycles && t.error.empty())
    fail("{}: a trial needs 'cycles' or an 'error' saying why it has none", where);
  if (j.contains("strategy")) t.strategy = text("strategy");
  if (j.contains("trial")) {
    if (!j["trial"].is_number_integer()) fail("{}: field 'trial' must be an integer", where);
    t.trial = j["trial"].get<int64_t>();
  }
  if (j.contains("seconds")) {
    if (!j["seconds"].is_number()) fail("{}: field 'seconds' must be a number", where);
    t.seconds = j["seconds"].get<double>();
  }
  return t;
}

std::vector<Trial> read_log(const std::string &path) {
  std::ifstream in(path);
  if (!in) fail("{}: cannot read the tuning log", path);
  std::vector<Trial> trials;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", path, n);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error &e) {
      fail("{}: not JSON ({}); a tuning log holds one trial per line", where, e.what());
    }
    trials.push_back(trial_from_json(j, where));
  }
  return trials;
}

void append_trial(std::ostream &out, const Trial &t) {
  out << to_json(t).dump() << '\n';
  out.flush();
}

}  // namespace vacc::tuning
