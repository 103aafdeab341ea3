// One measured (or refused) schedule of one workload on one hardware: what `vacc tune` writes to
// its log, one JSON object per line, and what the tuning database keeps the best of.
//
//   {"hw": "9f0c2a...", "config": "default", "workload": "conv2d n1 c64x56x56 o64 ...",
//    "schedule": {"tile_h": 14, ...}, "heuristic": false, "cycles": 81234, "error": "",
//    "strategy": "anneal", "trial": 17, "seconds": 0.21}
//
// `hw` is the config's hardware key (hw_key: the parameters its cycles depend on), and a trial
// holds for every config with the same one. `cycles` is absent when `error` says why
// the schedule was refused (its rule) or failed to lower.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/lower/operators.h"

namespace vacc::tuning {

struct Trial {
  std::string hw;
  std::string config;
  std::string workload;
  lower::AccelSchedule schedule;
  bool heuristic = false;  // the heuristic's point (default_schedule)
  std::optional<uint64_t> cycles;
  std::string error;
  std::string strategy;
  int64_t trial = 0;  // its index among its task's trials
  double seconds = 0;

  bool ok() const { return cycles.has_value(); }
};

// 16 lowercase hex digits identifying everything that changes a program's cycle count on this
// hardware: the ISA's parameters (isa_fingerprint) plus the bus, the DRAM model and the queue
// depths; not the clock, the DSP packing or the FPGA part, which leave the cycles as they are.
std::string hw_key(const isa::HwConfig &config);

nlohmann::ordered_json to_json(const Trial &t);
// `where` names the line for errors: "tune.log:12".
Trial trial_from_json(const nlohmann::json &j, const std::string &where);

// Every trial in a log; a line that is not a trial is a vacc::Error naming the file, the line
// and the field. Blank lines are skipped; a missing file is an error naming it.
std::vector<Trial> read_log(const std::string &path);
// One line, flushed: a log cut short by a crash loses at most the trial being written.
void append_trial(std::ostream &out, const Trial &t);

}  // namespace vacc::tuning
