#include "vacc/cli/output.h"

#include <fmt/format.h>

#include <algorithm>

#include "commands.h"
#include "vacc/isa/assembly.h"

namespace vacc::cli {

void add_no_build_flag(CLI::App *cmd, bool *no_build) {
  cmd->add_flag("--no-build", *no_build,
                "rtl: refuse a config whose hardware has no RTL model built into vacc or "
                "cached, instead of building one (minutes)");
}

isa::HwConfig load_named_config(const std::string &name_or_path) {
  return isa::load_config(isa::resolve_config_path(name_or_path));
}

isa::Program load_any_program(const isa::HwConfig &config, const std::string &path) {
  if (path.size() > 2 && path.substr(path.size() - 2) == ".s")
    return isa::assemble_file(config, path);
  isa::Program program = isa::load_program(path);
  program.check_config(config);
  return program;
}

std::string format_table(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> width;
  for (const auto &row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto &row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i)
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], width[i]);
    out += line + "\n";
  }
  return out;
}

}  // namespace vacc::cli
