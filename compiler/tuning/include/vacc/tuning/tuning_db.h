// The best schedule found per (hardware, workload): from tuning logs (`--tuning-log LOG`) and
// the per-user tuning database, which `vacc tune` updates and `vacc compile`, `run`, `bench
// model` and `sweep` consult, so that a tuned config needs no flag.
//
// The database lives in the per-user cache (support/cache_dir.h) under tuning/, one file per
// hardware (tuning/<hw>.jsonl, the best trial per workload, one JSON line each, trial.h's
// format). Writers merge under a lock and rename a complete file into place, so concurrent
// tuners and a crash leave it whole.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vacc/lower/lower_model.h"
#include "vacc/tuning/trial.h"

namespace vacc::tuning {

class TuningBook {
 public:
  // Keeps `t` when it measured fewer cycles than the best so far of its (hw, workload); trials
  // without cycles are not kept. Returns whether it was kept.
  bool add(const Trial &t);
  void add_all(const std::vector<Trial> &trials);
  std::optional<Trial> best(const std::string &hw, const std::string &workload) const;
  std::vector<Trial> all() const;  // ordered by (hw, workload)
  size_t size() const { return best_.size(); }

 private:
  std::map<std::pair<std::string, std::string>, Trial> best_;
};

// The database directory: `dir` when given, else user_cache_dir()/tuning.
std::string tuning_db_dir(const std::string &dir = "");
// The best trials of hardware `hw` in the database (none when it has no file).
TuningBook load_tuning_db(const std::string &hw, const std::string &dir = "");
// Merges `trials` into the database (each file of their hardware), keeping the best per
// workload. Throws vacc::Error naming the file when it cannot be written.
void update_tuning_db(const std::vector<Trial> &trials, const std::string &dir = "");

// What compilation consults: for `config`'s hardware, the best of the database (when
// `use_db`) and of `logs` (each read now; an unreadable or malformed log is a vacc::Error
// naming its line), by workload. Empty when neither has a trial of this hardware.
lower::TunedLookup tuned_lookup(const isa::HwConfig &config, const std::vector<std::string> &logs,
                                bool use_db, const std::string &db_dir = "");

}  // namespace vacc::tuning
