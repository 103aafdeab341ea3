// Runs Verilator's linter on hw/rtl for one config (see lint.h).
#include "vacc/hw/lint.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "vacc/hw/package.h"
#include "vacc/hw/parts.h"
#include "vacc/support/error.h"

namespace vacc::hw {

LintResult lint_rtl(const isa::HwConfig &config, const std::string &work_dir,
                    const std::string &verilator) {
  const std::string pkg = write_package(config, work_dir);
  std::string command = fmt::format("'{}' --lint-only -Wall '{}' '{}'", verilator,
                                    VACC_RTL_LINT_WAIVERS, pkg);
  std::stringstream list(VACC_RTL_SOURCES);
  std::string src;
  while (std::getline(list, src, ':')) {
    if (!src.empty()) command += " '" + src + "'";
  }
  command += " --top-module vacc_top 2>&1";
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe) fail("cannot run '{}': install Debian's 'verilator' package", verilator);
  LintResult r;
  r.command = command;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = pclose(pipe);
  if (status != 0 && r.output.find("%") == std::string::npos)
    fail("cannot run '{}' (exit status {}): install Debian's 'verilator' package", verilator,
         status);
  r.clean = status == 0 && r.output.empty();
  return r;
}

FpgaPart require_part(const std::string &name) {
  if (auto p = find_part(name)) return *p;
  std::string known;
  for (const FpgaPart &p : known_parts()) known += (known.empty() ? "" : ", ") + p.name;
  fail("unknown FPGA part '{}' for --part (known: {}); pass one of these or a longer part "
       "number that starts with one",
       name, known);
}

}  // namespace vacc::hw
