// A config written back as a config file: every key with its value, in the sections of
// load_config's schema, so that parse_config reads it back to an equal config. How a config
// built in code (a sweep point, a derived config) travels to a worker process.
#pragma once

#include <string>

#include "vacc/isa/config.h"

namespace vacc::isa {

std::string to_yaml(const HwConfig &config);

}  // namespace vacc::isa
