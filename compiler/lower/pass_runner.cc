#include "pass_runner.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "vacc/support/error.h"
#include "vacc/tir/printer.h"
#include "vacc/tir/verify.h"

namespace vacc::lower {

PassRunner::PassRunner(std::string unit, const isa::HwConfig &config, const LowerOptions &options,
                       std::vector<PassRecord> *records)
    : unit_(std::move(unit)), config_(config), options_(options), records_(records) {
  dir_ = options.dump_dir;
  if (dir_.empty())
    if (const char *env = std::getenv("VACC_DUMP_IR")) dir_ = env;
}

void PassRunner::input(const tir::Func &f) {
  if (options_.verify) tir::verify(f);
  dump("input", "tir", tir::to_string(f));
  ++index_;
}

void PassRunner::finish(const std::string &name, double ms) {
  spdlog::debug("pass {:<24} {:8.3f} ms  ({})", name, ms, unit_);
  if (records_) records_->push_back({name, ms, ""});
}

void PassRunner::after(const std::string &name, const tir::Func &f) {
  if (options_.verify) tir::verify(f);
  if (!dir_.empty()) dump(name, "tir", tir::to_string(f));
  if (options_.after_loop_pass) options_.after_loop_pass(name, f);
  ++index_;
}

void PassRunner::after(const std::string &name, const CodegenCommands &ops) {
  if (options_.verify) verify_commands(ops, config_, unit_ + ", after " + name);
  if (!dir_.empty()) {
    VACC_CHECK(buffers_) << unit_ << ": dumping a command list whose buffers are not named";
    dump(name, "cmd", commands_text(ops, *buffers_));
  }
  ++index_;
}

void PassRunner::dump(const std::string &name, const char *ext, const std::string &text) {
  if (dir_.empty()) return;
  std::filesystem::create_directories(dir_);
  const std::string path = fmt::format("{}/{:02d}_{}.{}", dir_, index_, name, ext);
  std::ofstream out(path);
  if (!out) fail("--dump-ir: cannot write '{}'", path);
  out << text;
}

}  // namespace vacc::lower
