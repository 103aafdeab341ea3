// `vacc hw gen|lint|synth`: the hardware side of a config. `gen` writes the SystemVerilog
// parameter package, `lint` runs Verilator's linter on the RTL, `synth` runs Yosys
// (synth_xilinx) and reports cells, flip-flops, LUTs, DSPs and block RAM, optionally against
// an FPGA part's capacity.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "commands.h"
#include "vacc/hw/lint.h"
#include "vacc/hw/package.h"
#include "vacc/hw/parts.h"
#include "vacc/hw/synth.h"
#include "vacc/isa/config.h"
#include "vacc/support/error.h"

namespace vacc::cli {

namespace {

struct HwOptions {
  std::string config = "default";
  std::string out_dir;
  std::string part;
  std::string family;
  std::string cache_dir;
  bool json = false;
  bool no_cache = false;
};

isa::HwConfig load(const std::string &name) {
  return isa::load_config(isa::resolve_config_path(name));
}

}  // namespace

void add_hw_command(CLI::App &app) {
  auto opts = std::make_shared<HwOptions>();
  CLI::App *hw = app.add_subcommand("hw", "Hardware: generate the RTL package, lint, synthesize");
  hw->require_subcommand(1);

  CLI::App *gen = hw->add_subcommand("gen", "Write vacc_pkg.sv (the RTL's parameters) for a config");
  gen->add_option("--config", opts->config, "Config name or YAML path")->capture_default_str();
  gen->add_option("-o,--out", opts->out_dir, "Output directory")->required();
  gen->callback([opts] {
    const isa::HwConfig config = load(opts->config);
    fmt::print("{}\n", hw::write_package(config, opts->out_dir));
  });

  CLI::App *lint = hw->add_subcommand("lint", "verilator --lint-only -Wall on the RTL for a config");
  lint->add_option("--config", opts->config, "Config name or YAML path")->capture_default_str();
  lint->callback([opts] {
    const isa::HwConfig config = load(opts->config);
    const std::string dir =
        (std::filesystem::temp_directory_path() / fmt::format("vacc-lint-{}", config.name)).string();
    const hw::LintResult r = hw::lint_rtl(config, dir);
    if (!r.clean) fail("the RTL is not lint-clean for config '{}':\n{}", config.name, r.output);
    fmt::print("lint clean: config {}\n", config.name);
  });

  CLI::App *synth = hw->add_subcommand("synth", "Synthesize with Yosys and report resources");
  synth->add_option("--config", opts->config, "Config name or YAML path")->capture_default_str();
  synth->add_option("--part", opts->part, "Compare with an FPGA part (e.g. xc7z020, xcu250)");
  synth->add_option("--family", opts->family,
                    "synth_xilinx family (default: xc7, or the part's family)");
  synth->add_option("--cache-dir", opts->cache_dir, "Result cache (default: $VACC_CACHE_DIR/synth)");
  synth->add_flag("--no-cache", opts->no_cache, "Synthesize even if a cached result exists");
  synth->add_flag("--json", opts->json, "Machine-readable output");
  synth->callback([opts] {
    const isa::HwConfig config = load(opts->config);
    std::optional<hw::FpgaPart> part;
    if (!opts->part.empty()) part = hw::require_part(opts->part);
    hw::SynthOptions so;
    so.family = !opts->family.empty() ? opts->family : part ? part->family : "xc7";
    so.cache_dir = opts->cache_dir;
    so.use_cache = !opts->no_cache;
    if (!opts->json) fmt::print(stderr, "synthesizing config {} with yosys ...\n", config.name);
    const hw::SynthReport report = hw::synthesize(config, so);
    std::optional<hw::PartFit> fit;
    if (part) fit = hw::check_fit(report, *part);
    if (opts->json) fmt::print("{}\n", hw::report_json(report, fit));
    else fmt::print("{}", hw::report_text(report, fit));
  });
}

}  // namespace vacc::cli
