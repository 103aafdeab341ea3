// vacc-hwgen: writes vacc_pkg.sv for one config. A standalone tool so that CMake can generate
// the package at build time without building the whole `vacc` command line.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "vacc/hw/package.h"
#include "vacc/isa/config.h"
#include "vacc/support/error.h"

int main(int argc, char **argv) {
  CLI::App app{"vacc-hwgen: write the SystemVerilog parameter package of a config"};
  std::string config_path;
  std::string out_dir;
  app.add_option("--config", config_path, "Hardware config (YAML path or name)")->required();
  app.add_option("-o,--out", out_dir, "Output directory for vacc_pkg.sv")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    const vacc::isa::HwConfig config =
        vacc::isa::load_config(vacc::isa::resolve_config_path(config_path));
    vacc::hw::write_package(config, out_dir);
  } catch (const vacc::Error &e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
