// A config as the Python module holds it: the parsed config and the YAML text it came from
// (what Config.derive changes keys of).
#pragma once

#include <string>

#include "vacc/isa/config.h"

namespace vacc::python {

struct Config {
  isa::HwConfig config;
  std::string yaml;

  static Config load(const std::string &name_or_path);  // as --config NAME_OR_PATH
  static Config parse(const std::string &yaml, const std::string &source);
};

}  // namespace vacc::python
