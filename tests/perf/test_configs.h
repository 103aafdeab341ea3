// The configs of the perf tests: a bundled name ("small"), or a path below tests/perf
// ("configs/batch2.yaml", configs that are not bundled).
#pragma once

#include <string>

#include "vacc/isa/config.h"

namespace vacc::sim {

inline isa::HwConfig config_named(const std::string &name) {
  if (name.find('/') != std::string::npos)
    return isa::load_config(std::string(VACC_PERF_TEST_CONFIGS) + "/" + name);
  return isa::load_config(isa::resolve_config_path(name));
}

}  // namespace vacc::sim
