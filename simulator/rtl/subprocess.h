// Running the tools that build a model (verilator, make, the C++ compiler) as child
// processes: no shell in between, so paths need no quoting.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vacc::sim {

// The directories of $PATH searched for `name`; "" when none holds an executable of that name.
std::string find_on_path(const std::string &name);

struct ProcessOptions {
  std::string cwd;                                           // "" = the caller's
  std::string log_path;                                      // stdout+stderr appended here
  std::vector<std::pair<std::string, std::string>> set_env;  // added or replaced
  std::vector<std::string> unset_env;
  // Called about every `tick_seconds` while the process runs, with the seconds since it began.
  std::function<void(double)> tick;
  double tick_seconds = 15;
};

// Runs argv[0] (looked up on $PATH) with its arguments; returns its exit status, or 128 + the
// signal that ended it, or -1 (with `error` set) when it could not be started.
int run_process(const std::vector<std::string> &argv, const ProcessOptions &options,
                std::string *error = nullptr);

// The standard output of a short command, or nothing when it cannot run or exits non-zero.
std::optional<std::string> process_output(const std::vector<std::string> &argv);

}  // namespace vacc::sim
