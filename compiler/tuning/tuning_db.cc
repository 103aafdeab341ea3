#include "vacc/tuning/tuning_db.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "vacc/lower/schedule_space.h"
#include "vacc/support/cache_dir.h"
#include "vacc/support/error.h"
#include "vacc/support/file_lock.h"

namespace vacc::tuning {

bool TuningBook::add(const Trial &t) {
  if (!t.cycles) return false;
  auto [it, inserted] = best_.try_emplace({t.hw, t.workload}, t);
  if (inserted) return true;
  if (*t.cycles >= *it->second.cycles) return false;
  it->second = t;
  return true;
}

void TuningBook::add_all(const std::vector<Trial> &trials) {
  for (const Trial &t : trials) add(t);
}

std::optional<Trial> TuningBook::best(const std::string &hw, const std::string &workload) const {
  auto it = best_.find({hw, workload});
  if (it == best_.end()) return std::nullopt;
  return it->second;
}

std::vector<Trial> TuningBook::all() const {
  std::vector<Trial> out;
  for (const auto &[key, t] : best_) out.push_back(t);
  return out;
}

std::string tuning_db_dir(const std::string &dir) {
  return dir.empty() ? user_cache_dir() + "/tuning" : dir;
}

TuningBook load_tuning_db(const std::string &hw, const std::string &dir) {
  TuningBook book;
  const std::string path = tuning_db_dir(dir) + "/" + hw + ".jsonl";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return book;
  for (const Trial &t : read_log(path))
    if (t.hw == hw) book.add(t);
  return book;
}

void update_tuning_db(const std::vector<Trial> &trials, const std::string &dir) {
  const std::string root = tuning_db_dir(dir);
  std::set<std::string> hws;
  for (const Trial &t : trials)
    if (t.cycles) hws.insert(t.hw);
  if (hws.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) fail("{}: cannot create the tuning database: {}", root, ec.message());
  for (const std::string &hw : hws) {
    const std::string path = root + "/" + hw + ".jsonl";
    FileLock lock(path + ".lock");
    if (!lock.error().empty()) fail("{}: {}", path, lock.error());
    TuningBook book = load_tuning_db(hw, root);
    bool changed = false;
    for (const Trial &t : trials)
      if (t.hw == hw) changed |= book.add(t);
    if (!changed) continue;
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
      std::ofstream out(tmp, std::ios::trunc);
      if (!out) fail("{}: cannot write the tuning database", tmp);
      for (const Trial &t : book.all()) append_trial(out, t);
      if (!out) fail("{}: cannot write the tuning database", tmp);
    }
    sync_file(tmp);
    std::filesystem::rename(tmp, path, ec);
    if (ec) fail("{}: cannot replace the tuning database: {}", path, ec.message());
  }
}

lower::TunedLookup tuned_lookup(const isa::HwConfig &config, const std::vector<std::string> &logs,
                                bool use_db, const std::string &db_dir) {
  const std::string hw = hw_key(config);
  // Which source each best came from, for the per-layer table.
  std::map<std::string, std::string> source;
  TuningBook book;
  if (use_db)
    for (const Trial &t : load_tuning_db(hw, db_dir).all())
      if (book.add(t)) source[t.workload] = "tuning database";
  for (const std::string &log : logs)
    for (const Trial &t : read_log(log))
      if (t.hw == hw && book.add(t)) source[t.workload] = log;
  if (book.size() == 0) return {};
  return [book = std::move(book), source = std::move(source),
          hw](const lower::Layer &layer) -> std::optional<lower::TunedSchedule> {
    const std::string workload = lower::workload_key(layer);
    const std::optional<Trial> t = book.best(hw, workload);
    if (!t) return std::nullopt;
    return lower::TunedSchedule{t->schedule, source.at(workload), *t->cycles};
  };
}

}  // namespace vacc::tuning
