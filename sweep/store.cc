#include "vacc/sweep/store.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <system_error>

#include "sqlite.h"
#include "vacc/support/error.h"

namespace vacc::sweep {

namespace fs = std::filesystem;

namespace {

constexpr int kSchemaVersion = 1;
constexpr int kBusyMs = 60'000;

// The derived columns of `results`, in order (ResultRow::values keys).
const std::vector<std::pair<std::string, std::string>> &result_columns() {
  static const std::vector<std::pair<std::string, std::string>> cols = {
      {"cycles", "INTEGER"},
      {"latency_ms", "REAL"},
      {"inferences_per_s", "REAL"},
      {"utilization", "REAL"},
      {"useful_macs", "INTEGER"},
      {"executed_macs", "INTEGER"},
      {"model_macs", "INTEGER"},
      {"cpu_steps", "INTEGER"},
      {"dram_bytes", "INTEGER"},
      {"energy_uj", "REAL"},
      {"energy_mac_uj", "REAL"},
      {"energy_alu_uj", "REAL"},
      {"energy_sram_uj", "REAL"},
      {"energy_dram_uj", "REAL"},
      {"energy_leakage_uj", "REAL"},
      {"edp_uj_ms", "REAL"},
      {"layers", "TEXT"},
      {"compile_s", "REAL"},
      {"run_s", "REAL"},
      {"pareto_latency_area", "INTEGER"},
      {"pareto_latency_energy", "INTEGER"},
      {"rtl_cycles", "INTEGER"},
      {"perf_error_pct", "REAL"},
      {"verify_message", "TEXT"},
  };
  return cols;
}

std::string schema() {
  std::string results_cols;
  for (const auto &[name, type] : result_columns())
    results_cols += fmt::format(", {} {}", name, type);
  return fmt::format(R"(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS points(
  id INTEGER PRIMARY KEY, label TEXT NOT NULL, params TEXT NOT NULL, config_yaml TEXT NOT NULL,
  status TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',
  lut REAL, ff REAL, dsp REAL, bram REAL, resources_source TEXT, part TEXT, fits INTEGER,
  area_mm2 REAL, area_split TEXT, clock_mhz REAL, peak_macs_per_cycle INTEGER,
  dram_bytes_per_cycle REAL);
CREATE TABLE IF NOT EXISTS tasks(
  point_id INTEGER NOT NULL, workload TEXT NOT NULL, kind TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending', owner TEXT, claimed_at REAL, finished_at REAL,
  seconds REAL, message TEXT NOT NULL DEFAULT '', result TEXT,
  PRIMARY KEY(point_id, workload, kind));
CREATE INDEX IF NOT EXISTS tasks_by_status ON tasks(status, kind);
CREATE TABLE IF NOT EXISTS results(
  point_id INTEGER NOT NULL, workload TEXT NOT NULL, status TEXT NOT NULL,
  message TEXT NOT NULL DEFAULT ''{},
  PRIMARY KEY(point_id, workload));
)",
                     results_cols);
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::optional<std::string> meta(sql::Database &db, const std::string &key) {
  auto s = db.prepare("SELECT value FROM meta WHERE key = ?");
  s.bind(1, key);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

}  // namespace

std::string process_owner() {
  return fmt::format("{}:{}", host_name(), getpid());
}

std::unique_ptr<Store> Store::open(const std::string &dir, const std::string &fingerprint,
                                   const std::string &spec_text, const std::string &spec_path) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    fail("{}: cannot create the sweep's output directory: {}", dir,
         ec ? ec.message() : "a file of that name exists");
  const std::string path = (fs::path(dir) / "sweep.db").string();
  if (access(dir.c_str(), W_OK) != 0)
    fail("{}: the sweep's output directory is not writable (choose another -o DIR)", dir);
  std::unique_ptr<Store> store(new Store());
  store->path_ = path;
  store->db_ = std::make_unique<sql::Database>(path, kBusyMs);
  sql::Database &db = *store->db_;
  // A damaged file (a disk fault, a copy cut short, another program's file): said at once,
  // with what to do, not as a failing statement later.
  try {
    auto check = db.prepare("PRAGMA quick_check");
    const std::string verdict = check.step() ? check.text(0) : "no answer";
    if (verdict != "ok") fail("{}", verdict);
  } catch (const Error &e) {
    fail(
        "{}: the sweep database is damaged or not a sweep database ({}). Its results cannot be "
        "read: give another -o DIR, or delete {} to start over",
        path, e.what(), dir);
  }
  {
    sql::Transaction t(db);
    db.exec(schema());
    const auto existing = meta(db, "spec_fingerprint");
    if (existing && *existing != fingerprint) {
      const std::string other = meta(db, "spec_path").value_or("?");
      fail(
          "{}: holds the results of another sweep spec ({}, fingerprint {}; this spec {} has "
          "{}: its base, axes, constraints, workloads or models differ). Nothing was changed: "
          "give another -o DIR, or delete {} to start over",
          path, other, *existing, spec_path, fingerprint, dir);
    }
    if (!existing) {
      auto put = db.prepare("INSERT INTO meta(key, value) VALUES(?, ?)");
      for (const auto &[k, v] : std::vector<std::pair<std::string, std::string>>{
               {"spec_fingerprint", fingerprint},
               {"spec_path", spec_path},
               {"spec_text", spec_text},
               {"schema_version", std::to_string(kSchemaVersion)},
               {"created_at", fmt::format("{:.0f}", now_seconds())}}) {
        put.bind(1, k).bind(2, v);
        put.run();
      }
    } else if (meta(db, "schema_version") != std::to_string(kSchemaVersion)) {
      fail("{}: written by another version of vacc sweep (schema {}); use another -o DIR", path,
           meta(db, "schema_version").value_or("?"));
    }
    t.commit();
  }
  return store;
}

Store::~Store() = default;

void Store::save_points(const std::vector<PointRecord> &points) {
  sql::Transaction t(*db_);
  auto s = db_->prepare(
      "INSERT OR REPLACE INTO points(id, label, params, config_yaml, status, reason, lut, ff, "
      "dsp, bram, resources_source, part, fits, area_mm2, area_split, clock_mhz, "
      "peak_macs_per_cycle, dram_bytes_per_cycle) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const PointRecord &p : points) {
    s.bind(1, p.id).bind(2, p.label).bind(3, p.params.dump()).bind(4, p.config_yaml);
    s.bind(5, p.status).bind(6, p.reason);
    if (p.status == "invalid") {
      for (int i = 7; i <= 18; ++i) s.bind_null(i);
    } else {
      s.bind(7, p.lut).bind(8, p.ff).bind(9, p.dsp).bind(10, p.bram);
      s.bind(11, p.resources_source).bind(12, p.part).bind(13, int64_t{p.fits});
      s.bind(14, p.area_mm2).bind(15, p.area_split.dump()).bind(16, p.clock_mhz);
      s.bind(17, p.peak_macs_per_cycle).bind(18, p.dram_bytes_per_cycle);
    }
    s.run();
  }
  t.commit();
}

std::vector<PointRecord> Store::points() {
  auto s = db_->prepare(
      "SELECT id, label, params, config_yaml, status, reason, lut, ff, dsp, bram, "
      "resources_source, part, fits, area_mm2, area_split, clock_mhz, peak_macs_per_cycle, "
      "dram_bytes_per_cycle FROM points ORDER BY id");
  std::vector<PointRecord> out;
  while (s.step()) {
    PointRecord p;
    p.id = s.integer(0);
    p.label = s.text(1);
    p.params = nlohmann::json::parse(s.text(2));
    p.config_yaml = s.text(3);
    p.status = s.text(4);
    p.reason = s.text(5);
    if (!s.is_null(6)) {
      p.lut = s.real(6);
      p.ff = s.real(7);
      p.dsp = s.real(8);
      p.bram = s.real(9);
      p.resources_source = s.text(10);
      p.part = s.text(11);
      p.fits = s.integer(12) != 0;
      p.area_mm2 = s.real(13);
      p.area_split = nlohmann::json::parse(s.text(14));
      p.clock_mhz = s.real(15);
      p.peak_macs_per_cycle = s.integer(16);
      p.dram_bytes_per_cycle = s.real(17);
    }
    out.push_back(std::move(p));
  }
  return out;
}

void Store::add_tasks(const std::vector<TaskKey> &tasks) {
  sql::Transaction t(*db_);
  auto s = db_->prepare("INSERT OR IGNORE INTO tasks(point_id, workload, kind) VALUES(?, ?, ?)");
  for (const TaskKey &k : tasks) {
    s.bind(1, k.point).bind(2, k.workload).bind(3, k.kind);
    s.run();
  }
  t.commit();
}

int64_t Store::release_abandoned(const std::string &host) {
  sql::Transaction t(*db_);
  std::vector<std::string> gone;
  {
    auto s = db_->prepare("SELECT DISTINCT owner FROM tasks WHERE status = 'running'");
    while (s.step()) {
      const std::string owner = s.text(0);
      const size_t colon = owner.rfind(':');
      if (colon == std::string::npos || owner.substr(0, colon) != host) continue;
      const pid_t pid = static_cast<pid_t>(std::stol(owner.substr(colon + 1)));
      if (kill(pid, 0) != 0 && errno == ESRCH) gone.push_back(owner);
    }
  }
  int64_t released = 0;
  auto s = db_->prepare(
      "UPDATE tasks SET status = 'pending', owner = NULL, claimed_at = NULL "
      "WHERE status = 'running' AND owner = ?");
  for (const auto &owner : gone) {
    s.bind(1, owner);
    s.run();
    released += db_->changes();
  }
  t.commit();
  return released;
}

int64_t Store::retry_failed() {
  sql::Transaction t(*db_);
  db_->exec(
      "UPDATE tasks SET status = 'pending', owner = NULL, claimed_at = NULL, message = '' "
      "WHERE status = 'failed'");
  const int64_t n = db_->changes();
  t.commit();
  return n;
}

std::optional<TaskKey> Store::claim(const std::string &owner) {
  sql::Transaction t(*db_);
  // Runs first (by point), then synthesis and verification, which take longer.
  auto s = db_->prepare(
      "SELECT point_id, workload, kind FROM tasks WHERE status = 'pending' "
      "ORDER BY CASE kind WHEN 'run' THEN 0 WHEN 'synth' THEN 1 ELSE 2 END, point_id, workload "
      "LIMIT 1");
  if (!s.step()) return std::nullopt;
  TaskKey k{s.integer(0), s.text(1), s.text(2)};
  auto u = db_->prepare(
      "UPDATE tasks SET status = 'running', owner = ?, claimed_at = ? "
      "WHERE point_id = ? AND workload = ? AND kind = ?");
  u.bind(1, owner).bind(2, now_seconds()).bind(3, k.point).bind(4, k.workload).bind(5, k.kind);
  u.run();
  t.commit();
  return k;
}

void Store::finish(const TaskKey &k, bool ok, const std::string &message,
                   const nlohmann::json &result, double seconds) {
  sql::Transaction t(*db_);
  auto u = db_->prepare(
      "UPDATE tasks SET status = ?, message = ?, result = ?, finished_at = ?, seconds = ? "
      "WHERE point_id = ? AND workload = ? AND kind = ?");
  u.bind(1, std::string(ok ? "ok" : "failed")).bind(2, message);
  if (ok)
    u.bind(3, result.dump());
  else
    u.bind_null(3);
  u.bind(4, now_seconds()).bind(5, seconds).bind(6, k.point).bind(7, k.workload).bind(8, k.kind);
  u.run();
  t.commit();
}

TaskCounts Store::counts(const std::string &kind) {
  auto s = db_->prepare(kind.empty()
                            ? "SELECT status, COUNT(*) FROM tasks GROUP BY status"
                            : "SELECT status, COUNT(*) FROM tasks WHERE kind = ? GROUP BY status");
  if (!kind.empty()) s.bind(1, kind);
  TaskCounts c;
  while (s.step()) {
    const std::string st = s.text(0);
    const int64_t n = s.integer(1);
    if (st == "pending")
      c.pending = n;
    else if (st == "running")
      c.running = n;
    else if (st == "ok")
      c.ok = n;
    else
      c.failed += n;
  }
  return c;
}

std::vector<TaskRecord> Store::tasks(const std::string &kind, const std::string &status) {
  auto s = db_->prepare(
      "SELECT point_id, workload, kind, status, message, result, seconds FROM tasks "
      "WHERE kind = ? AND (? = '' OR status = ?) ORDER BY point_id, workload");
  s.bind(1, kind).bind(2, status).bind(3, status);
  std::vector<TaskRecord> out;
  while (s.step()) {
    TaskRecord r;
    r.key = {s.integer(0), s.text(1), s.text(2)};
    r.status = s.text(3);
    r.message = s.text(4);
    if (!s.is_null(5)) r.result = nlohmann::json::parse(s.text(5));
    r.seconds = s.is_null(6) ? 0 : s.real(6);
    out.push_back(std::move(r));
  }
  return out;
}

void Store::save_results(const std::vector<ResultRow> &rows) {
  std::string names = "point_id, workload, status, message", marks = "?, ?, ?, ?";
  for (const auto &[name, _] : result_columns()) {
    names += ", " + name;
    marks += ", ?";
  }
  sql::Transaction t(*db_);
  db_->exec("DELETE FROM results");
  auto s = db_->prepare(fmt::format("INSERT INTO results({}) VALUES({})", names, marks));
  for (const ResultRow &r : rows) {
    s.bind(1, r.point).bind(2, r.workload).bind(3, r.status).bind(4, r.message);
    int i = 5;
    for (const auto &[name, type] : result_columns()) {
      auto it = r.values.find(name);
      if (it == r.values.end() || it->is_null())
        s.bind_null(i);
      else if (type == "TEXT")
        s.bind(i, it->is_string() ? it->get<std::string>() : it->dump());
      else if (type == "INTEGER")
        s.bind(i, it->get<int64_t>());
      else
        s.bind(i, it->get<double>());
      ++i;
    }
    s.run();
  }
  t.commit();
}

std::vector<ResultRow> Store::results() {
  std::string names;
  for (const auto &[name, _] : result_columns()) names += ", " + name;
  auto s = db_->prepare(fmt::format(
      "SELECT point_id, workload, status, message{} FROM results ORDER BY point_id, workload",
      names));
  std::vector<ResultRow> out;
  while (s.step()) {
    ResultRow r;
    r.point = s.integer(0);
    r.workload = s.text(1);
    r.status = s.text(2);
    r.message = s.text(3);
    int i = 4;
    for (const auto &[name, type] : result_columns()) {
      if (s.is_null(i))
        r.values[name] = nullptr;
      else if (type == "TEXT")
        r.values[name] = s.text(i);
      else if (type == "INTEGER")
        r.values[name] = s.integer(i);
      else
        r.values[name] = s.real(i);
      ++i;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace vacc::sweep
