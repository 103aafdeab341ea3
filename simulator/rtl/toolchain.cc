#include "toolchain.h"

#include <filesystem>
#include <optional>

#include "subprocess.h"
#include "vacc/support/error.h"

namespace vacc::sim {
namespace {

std::string first_line(const std::string &text) {
  const size_t end = text.find('\n');
  return text.substr(0, end);
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

[[noreturn]] void missing(const std::string &what) {
  fail(
      "cannot build an RTL model: step 'find the tools' failed: {}. Install what is missing "
      "(scripts/install-deps installs Debian's verilator, make and g++), or use --engine perf, "
      "which needs no RTL model",
      what);
}

Toolchain find_toolchain() {
  Toolchain t;
  t.verilator = find_on_path("verilator");
  if (t.verilator.empty()) missing("Verilator is not installed ('verilator' is not on $PATH)");
  const std::optional<std::string> version = process_output({t.verilator, "--version"});
  if (!version || version->empty())
    missing(fmt::format("'{} --version' does not run", t.verilator));
  t.verilator_version = first_line(*version);
  const std::optional<std::string> root =
      process_output({t.verilator, "--getenv", "VERILATOR_ROOT"});
  if (!root || trim(*root).empty())
    missing(fmt::format("'{} --getenv VERILATOR_ROOT' gives no directory", t.verilator));
  t.verilator_root = trim(*root);
  if (!std::filesystem::exists(t.verilator_root + "/include/verilated.mk"))
    missing(fmt::format("Verilator's runtime is not in {}/include", t.verilator_root));

  // The compiler vacc was built with, else the system's.
  t.compiler = VACC_CXX_COMPILER;
  if (!std::filesystem::exists(t.compiler)) t.compiler = find_on_path("c++");
  if (t.compiler.empty())
    missing("no C++ compiler (the one vacc was built with, " VACC_CXX_COMPILER
            ", is gone and 'c++' is not on $PATH)");
  const std::optional<std::string> cxx_version = process_output({t.compiler, "--version"});
  if (!cxx_version) missing(fmt::format("'{} --version' does not run", t.compiler));
  t.compiler_version = first_line(*cxx_version);
  t.make = find_on_path("make");
  if (t.make.empty()) missing("'make' is not on $PATH");
  t.ccache = VACC_CCACHE;
  if (!t.ccache.empty() && !std::filesystem::exists(t.ccache)) t.ccache = find_on_path("ccache");
  return t;
}

}  // namespace

const Toolchain &build_toolchain() {
  static const Toolchain toolchain = find_toolchain();
  return toolchain;
}

}  // namespace vacc::sim
