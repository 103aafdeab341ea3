// Progress of a sweep: on a terminal a bar redrawn in place (tasks done, failed, ETA), else
// one plain line per finished task, or with --json one JSON object per line (events "start",
// "task", "finish") for machines.
#pragma once

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace vacc::sweep {

class Progress {
 public:
  enum class Mode { kBar, kLines, kJson };
  // `total` tasks of which `already` finished in earlier runs (not counted in the ETA).
  Progress(Mode mode, std::FILE *out, int64_t total, int64_t already);

  void start(const nlohmann::json &summary);  // points, invalid, excluded, tasks
  void task(const std::string &kind, const std::string &what, bool ok, const std::string &detail);
  void note(const std::string &line);  // a message between tasks
  void finish(const nlohmann::json &summary, const std::string &text);

  // The mode for `out`: kJson when asked, else kBar on a terminal, else kLines.
  static Mode choose(bool json, std::FILE *out);

 private:
  void draw();
  std::string eta() const;

  Mode mode_;
  std::FILE *out_;
  int64_t total_, already_, done_ = 0, failed_ = 0;
  std::chrono::steady_clock::time_point start_;
  bool bar_drawn_ = false;
};

}  // namespace vacc::sweep
