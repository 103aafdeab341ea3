// Building one Verilated model of vacc_top as a shared library, in a directory of its own:
// the package generated for the config, the model kit this binary embeds (model_kit.h),
// Verilator, then make (Verilator's makefile, extended to compile the C++ harness and link a
// library that exports only kLoadableModelSymbol). model_cache.h decides when to build and
// where the result goes; this only builds.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "toolchain.h"
#include "vacc/isa/config.h"

namespace vacc::sim {

struct ModelBuildRequest {
  isa::HwConfig config;  // the package is generated from it; its name appears in messages
  std::string key;       // the cache key (model_key.h): the Verilator prefix's suffix
  std::string dir;       // an empty directory to build in
  std::string log_path;  // every tool's output is appended here
  // One line per step, its end, and a heartbeat during long steps.
  std::function<void(const std::string &)> progress;
};

// A step that failed: its name ("verilate", "compile"...), what went wrong, and the last
// lines its tool wrote to the log (if one ran).
class ModelBuildFailure : public std::runtime_error {
 public:
  ModelBuildFailure(std::string step, const std::string &what, std::string output = "")
      : std::runtime_error(what), step_(std::move(step)), output_(std::move(output)) {}
  const std::string &step() const { return step_; }
  const std::string &output() const { return output_; }

 private:
  std::string step_, output_;
};

// The build steps, numbered in progress messages; the cache adds the last, "load".
inline constexpr int kModelBuildSteps = 4;

// Builds the library into `request.dir`; returns its path. Throws ModelBuildFailure.
std::string build_model(const ModelBuildRequest &request, const Toolchain &toolchain);

// "42.0 s", "3 min 5 s".
std::string format_seconds(double seconds);

}  // namespace vacc::sim
