// The results of a sweep, in SQLite at DIR/sweep.db:
//   meta     the spec (text and fingerprint) the directory belongs to
//   points   one row per design point: its parameters and config, valid / invalid (with the
//            rule broken) / excluded (with the constraint broken), resources, fit, area
//   tasks    the work queue and its raw results: one row per (point, workload, kind) with
//            kind run (perf), verify (rtl) or synth (Yosys, workload ""), its status
//            (pending, running, ok, failed), owner, message and measurement (JSON)
//   results  one row per (point, workload) derived from the above: cycles, latency,
//            utilization, energy and its split, EDP, Pareto marks, perf's error against rtl
// Tasks are claimed inside IMMEDIATE transactions, so several processes (-j workers report
// through one coordinator; two `vacc sweep` runs on one DIR) share the queue safely; each
// result is committed as it arrives, so a killed sweep loses only the tasks in flight, and a
// rerun hands those (claimed by a process that no longer exists) out again.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace vacc::sweep {

namespace sql {
class Database;
}

struct PointRecord {
  int64_t id = 0;
  std::string label;
  nlohmann::json params = nlohmann::json::object();  // axis key -> value (as text)
  std::string config_yaml;
  std::string status;  // "valid", "invalid", "excluded"
  std::string reason;  // why invalid or excluded
  double lut = 0, ff = 0, dsp = 0, bram = 0;
  std::string resources_source;  // "model" or "yosys"
  std::string part;              // the FPGA part checked for fits
  bool fits = false;
  double area_mm2 = 0;
  nlohmann::json area_split = nlohmann::json::object();
  double clock_mhz = 0;
  int64_t peak_macs_per_cycle = 0;
  double dram_bytes_per_cycle = 0;
};

struct TaskKey {
  int64_t point = 0;
  std::string workload;  // "" for synth
  std::string kind;      // "run", "verify", "synth"
  bool operator==(const TaskKey &) const = default;
};

struct TaskRecord {
  TaskKey key;
  std::string status;  // "pending", "running", "ok", "failed"
  std::string message;
  nlohmann::json result;  // null unless ok
  double seconds = 0;     // wall time of the task
};

struct TaskCounts {
  int64_t pending = 0, running = 0, ok = 0, failed = 0;
  int64_t total() const { return pending + running + ok + failed; }
};

// One derived row of `results` (see metrics.h for how each figure is obtained).
struct ResultRow {
  int64_t point = 0;
  std::string workload;
  std::string status;  // "ok" or "failed" (pending/running ones have no row)
  std::string message;
  nlohmann::json values = nlohmann::json::object();  // column -> value
};

class Store {
 public:
  // Opens DIR/sweep.db, creating DIR and the schema. When the database holds another spec's
  // results (a different fingerprint) throws vacc::Error naming the file, touching nothing.
  static std::unique_ptr<Store> open(const std::string &dir, const std::string &fingerprint,
                                     const std::string &spec_text, const std::string &spec_path);
  ~Store();

  const std::string &path() const { return path_; }

  void save_points(const std::vector<PointRecord> &points);
  std::vector<PointRecord> points();

  // Adds tasks not there yet (as pending); those already present keep their state.
  void add_tasks(const std::vector<TaskKey> &tasks);
  // Hands tasks that a process on this host claimed but no longer runs back to pending.
  int64_t release_abandoned(const std::string &host);
  // Puts failed tasks back in the queue (--retry-failed); returns how many.
  int64_t retry_failed();
  // Claims the next pending task for `owner` (host:pid); nullopt when none is pending.
  std::optional<TaskKey> claim(const std::string &owner);
  void finish(const TaskKey &key, bool ok, const std::string &message, const nlohmann::json &result,
              double seconds);
  TaskCounts counts(const std::string &kind = "");
  std::vector<TaskRecord> tasks(const std::string &kind, const std::string &status = "");

  // Replaces the derived results table.
  void save_results(const std::vector<ResultRow> &rows);
  std::vector<ResultRow> results();

 private:
  Store() = default;
  std::unique_ptr<sql::Database> db_;
  std::string path_;
};

// "host:pid" of this process.
std::string process_owner();

}  // namespace vacc::sweep
