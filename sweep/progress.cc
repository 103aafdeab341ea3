#include "vacc/sweep/progress.h"

#include <fmt/format.h>
#include <unistd.h>

namespace vacc::sweep {

Progress::Mode Progress::choose(bool json, std::FILE *out) {
  if (json) return Mode::kJson;
  return isatty(fileno(out)) ? Mode::kBar : Mode::kLines;
}

Progress::Progress(Mode mode, std::FILE *out, int64_t total, int64_t already)
    : mode_(mode),
      out_(out),
      total_(total),
      already_(already),
      start_(std::chrono::steady_clock::now()) {}

namespace {

std::string duration(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600)
    return fmt::format("{}m{:02.0f}s", static_cast<int>(s / 60), s - 60 * static_cast<int>(s / 60));
  return fmt::format("{}h{:02d}m", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
}

}  // namespace

std::string Progress::eta() const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int64_t left = total_ - already_ - done_;
  if (done_ == 0 || left <= 0) return left <= 0 ? "0s" : "?";
  return duration(elapsed / static_cast<double>(done_) * static_cast<double>(left));
}

void Progress::start(const nlohmann::json &summary) {
  if (mode_ == Mode::kJson) {
    nlohmann::json j = summary;
    j["event"] = "start";
    fmt::print(out_, "{}\n", j.dump());
  } else {
    fmt::print(out_, "{}\n", summary.value("text", std::string()));
  }
  std::fflush(out_);
  if (mode_ == Mode::kBar) draw();
}

void Progress::draw() {
  const int64_t finished = already_ + done_;
  const int width = 30;
  const int filled = total_ ? static_cast<int>(width * finished / total_) : width;
  fmt::print(out_, "\r[{}{}] {}/{} tasks, {} failed, ETA {}   ", std::string(filled, '#'),
             std::string(width - filled, '.'), finished, total_, failed_, eta());
  std::fflush(out_);
  bar_drawn_ = true;
}

void Progress::task(const std::string &kind, const std::string &what, bool ok,
                    const std::string &detail) {
  ++done_;
  if (!ok) ++failed_;
  const int64_t finished = already_ + done_;
  switch (mode_) {
    case Mode::kJson:
      fmt::print(out_, "{}\n",
                 nlohmann::json{{"event", "task"},
                                {"kind", kind},
                                {"what", what},
                                {"ok", ok},
                                {"detail", detail},
                                {"done", finished},
                                {"total", total_},
                                {"failed", failed_}}
                     .dump());
      break;
    case Mode::kLines:
      fmt::print(out_, "[{}/{}] {} {}: {}{}\n", finished, total_, kind, what, ok ? "ok" : "FAILED",
                 detail.empty() ? "" : " " + detail);
      break;
    case Mode::kBar:
      if (!ok) {
        fmt::print(out_, "\r{:80}\r{} {}: FAILED {}\n", "", kind, what, detail);
      }
      draw();
      break;
  }
  std::fflush(out_);
}

void Progress::note(const std::string &line) {
  if (mode_ == Mode::kJson) {
    fmt::print(out_, "{}\n", nlohmann::json{{"event", "note"}, {"text", line}}.dump());
  } else {
    if (mode_ == Mode::kBar && bar_drawn_) fmt::print(out_, "\r{:100}\r", "");
    fmt::print(out_, "{}\n", line);
    if (mode_ == Mode::kBar && bar_drawn_) draw();
  }
  std::fflush(out_);
}

void Progress::finish(const nlohmann::json &summary, const std::string &text) {
  if (mode_ == Mode::kJson) {
    nlohmann::json j = summary;
    j["event"] = "finish";
    fmt::print(out_, "{}\n", j.dump());
  } else {
    if (mode_ == Mode::kBar && bar_drawn_) fmt::print(out_, "\n");
    fmt::print(out_, "{}", text);
  }
  std::fflush(out_);
}

}  // namespace vacc::sweep
