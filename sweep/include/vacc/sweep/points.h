// The design points of a sweep: the cartesian product of its axes applied to the base
// config, each validated by the config reader (isa/config.h) and by the RTL generator
// (hw/package.h), so that an invalid combination is listed with the rule it breaks.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/sweep/spec.h"

namespace vacc::sweep {

struct Point {
  int64_t index = 0;  // position in the product, the first axis varying slowest
  std::vector<std::pair<std::string, std::string>> params;  // axis key -> value
  std::string config_yaml;                                  // the base with params applied
  std::optional<isa::HwConfig> config;                      // when valid
  std::string invalid_reason;                               // when not

  // "gemm.block_in=16 buffers.wgt_kib=64" ("base" with no axis).
  std::string label() const;
};

// The base config's YAML text: the inline base, or the file `spec.base` names (a path
// relative to `spec_dir`, an absolute path, or a bundled config name).
std::string base_config_text(const SweepSpec &spec, const std::string &spec_dir);

// Every point of `spec`, validated. The config of point i is named "<spec name>-p<i>".
std::vector<Point> expand_points(const SweepSpec &spec, const std::string &base_yaml);

// The config of one point from its YAML text (as a worker receives it); throws vacc::Error.
isa::HwConfig point_config(const std::string &config_yaml, const std::string &name);

}  // namespace vacc::sweep
