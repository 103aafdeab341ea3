// Small helpers shared by the subcommands: config loading and text tables.
#pragma once

#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/program.h"

namespace vacc::cli {

// The --config option's value: a YAML path or a bundled config name.
isa::HwConfig load_named_config(const std::string &name_or_path);

// A program from a .vprog file, or assembled on the fly from a .s file.
isa::Program load_any_program(const isa::HwConfig &config, const std::string &path);

// Left-aligned columns separated by two spaces; the first row is the header.
std::string format_table(const std::vector<std::vector<std::string>> &rows);

}  // namespace vacc::cli
