// `vacc devices` and `vacc fpga run|check|gen`: the FPGA side of the command line.
// `devices` lists what XRT sees (or says why it sees nothing); `fpga run` runs a program file
// on a board through the xrt device; `fpga check` validates an xclbin; `fpga gen` writes the
// config-dependent packaging files (kernel.xml, the v++ link configuration) for fpga/build.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "vacc/cli/output.h"
#include "vacc/driver/device.h"
#include "vacc/driver/xrt_device.h"
#include "vacc/driver/xrt_kernel.h"
#include "vacc/isa/config.h"
#include "vacc/isa/program.h"
#include "vacc/support/error.h"

namespace vacc::cli {
namespace {

void print_devices(bool json) {
  driver::XrtDeviceList list = driver::list_xrt_devices();
  if (json) {
    nlohmann::json out;
    out["xrt_usable"] = list.xrt_usable;
    out["problem"] = list.problem;
    out["devices"] = nlohmann::json::array();
    for (const auto &d : list.devices)
      out["devices"].push_back(
          {{"index", d.index}, {"bdf", d.bdf}, {"name", d.name}, {"xclbin", d.xclbin}});
    fmt::print("{}\n", out.dump(2));
  } else if (!list.xrt_usable) {
    // Falls through to the error below, printed once by main().
  } else if (list.devices.empty()) {
    fmt::print("no FPGA devices: {}\n", list.problem);
  } else {
    fmt::print("{:<6} {:<14} {:<48} {}\n", "index", "bdf", "shell", "loaded xclbin");
    for (const auto &d : list.devices)
      fmt::print("{:<6} {:<14} {:<48} {}\n", d.index, d.bdf, d.name,
                 d.xclbin.empty() ? "-" : d.xclbin);
  }
  // Seeing nothing is an answer, not an error; an XRT that cannot look is an error to fix.
  if (!list.xrt_usable) throw Error(list.problem);
}

struct FpgaRunArgs {
  std::string program;
  std::string xclbin;
  std::string device = "0";
  std::string config = "default";
  double timeout = 60;
  std::string save;
  bool json = false;
};

void run_on_fpga(const FpgaRunArgs &args) {
  driver::check_xclbin(args.xclbin);  // first: a wrong xclbin reads the same without a board
  isa::HwConfig config = load_named_config(args.config);
  isa::Program program = load_any_program(config, args.program);

  driver::XrtOptions options;
  options.xclbin = args.xclbin;
  options.device = args.device;
  std::unique_ptr<driver::Device> device = driver::open_xrt_device(options, config);
  const auto start = std::chrono::steady_clock::now();
  driver::RunResult result = driver::run_program(*device, program, args.timeout);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (!args.save.empty()) {
    isa::Program after = program;
    after.dram = result.dram;
    isa::save_program(after, args.save);
  }
  if (args.json) {
    nlohmann::ordered_json out;
    out["program"] = args.program;
    out["config"] = config.name;
    out["engine"] = device->name();
    out["device"] = args.device;
    out["instructions"] = program.insn_count;
    out["counters"] = result.counters;
    out["wall_seconds"] = seconds;
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("program  {} ({} instructions, {} bytes of device memory)\n", args.program,
             program.insn_count, program.dram.size());
  fmt::print("engine   xrt, device {}, config '{}'\n\n", args.device, config.name);
  std::vector<std::vector<std::string>> rows = {{"counter", "value"}};
  for (const auto &[name, value] : result.counters)
    rows.push_back({name, fmt::format("{}", value)});
  fmt::print("{}", format_table(rows));
  fmt::print("\nran in {:.3f} s (including copies to and from the board)\n", seconds);
}

struct GenArgs {
  std::string config = "default";
  std::string platform;  // default: the config's fpga.platform
  std::string bank = "auto";
  std::string out_dir;
};

void write_file(const std::filesystem::path &path, const std::string &text) {
  std::ofstream out(path);
  out << text;
  if (!out) fail("cannot write '{}'", path.string());
}

void generate(const GenArgs &args) {
  isa::HwConfig config = load_named_config(args.config);
  std::string platform = args.platform.empty() ? config.fpga_platform : args.platform;
  std::string bank =
      args.bank == "auto" ? driver::xrt_kernel::default_memory_bank(platform) : args.bank;
  std::filesystem::path dir(args.out_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("cannot create output directory '{}': {}", dir.string(), ec.message());
  write_file(dir / "kernel.xml", driver::xrt_kernel::kernel_xml(config));
  write_file(dir / "link.cfg", driver::xrt_kernel::link_config(config, bank));
  fmt::print("wrote {} and {} (config '{}', platform '{}', memory bank '{}')\n",
             (dir / "kernel.xml").string(), (dir / "link.cfg").string(), config.name, platform,
             bank.empty() ? "(the platform's own)" : bank);
}

void check(const std::string &xclbin) {
  driver::XclbinInfo info = driver::check_xclbin(xclbin);
  fmt::print("{}: a valid vacc xclbin (uuid {}, platform '{}', kernels: {})\n", xclbin, info.uuid,
             info.platform, fmt::join(info.kernels, ", "));
}

}  // namespace

void add_fpga_command(CLI::App &app) {
  auto json = std::make_shared<bool>(false);
  CLI::App *devices = app.add_subcommand("devices", "List the FPGA devices XRT can see");
  devices->add_flag("--json", *json, "Machine-readable output");
  devices->callback([json] { print_devices(*json); });

  CLI::App *fpga = app.add_subcommand("fpga", "Run on an FPGA board (XRT) and package for one");
  fpga->require_subcommand(1);

  auto run = std::make_shared<FpgaRunArgs>();
  CLI::App *run_cmd = fpga->add_subcommand("run", "Run a program (.vprog or .s) on an FPGA board through XRT");
  run_cmd->add_option("program", run->program, "Program (.vprog, or .s assembled on the fly)")
      ->required();
  run_cmd->add_option("--xclbin", run->xclbin, "xclbin holding the vacc_top kernel")->required();
  run_cmd->add_option("--device", run->device, "Device index or PCIe BDF (see `vacc devices`)")
      ->capture_default_str();
  run_cmd->add_option("--config,-c", run->config, "Hardware config (name or YAML file)")
      ->capture_default_str();
  run_cmd->add_option("--timeout", run->timeout, "Seconds to wait for the accelerator")
      ->capture_default_str();
  run_cmd->add_option("--save", run->save, "Write the program with its DRAM image after the run");
  run_cmd->add_flag("--json", run->json, "Machine-readable output");
  run_cmd->callback([run] { run_on_fpga(*run); });

  auto xclbin = std::make_shared<std::string>();
  CLI::App *check_cmd = fpga->add_subcommand(
      "check",
      "Check an xclbin without a board: it parses and holds vacc_top with vacc's "
      "register map");
  check_cmd->add_option("--xclbin", *xclbin, "The xclbin to check")->required();
  check_cmd->callback([xclbin] { check(*xclbin); });

  auto gen = std::make_shared<GenArgs>();
  CLI::App *gen_cmd = fpga->add_subcommand(
      "gen", "Write kernel.xml and the v++ link configuration for a config (used by fpga/build)");
  gen_cmd->add_option("--config,-c", gen->config, "Hardware config (name or YAML file)")
      ->capture_default_str();
  gen_cmd->add_option("--platform,-p", gen->platform,
                      "Vitis platform (default: the config's fpga.platform)");
  gen_cmd
      ->add_option("--bank", gen->bank,
                   "Memory bank of the AXI master, e.g. DDR[1] or HBM[0]; 'auto' picks from "
                   "the platform name, '' leaves it to the platform")
      ->capture_default_str();
  gen_cmd->add_option("-o,--output", gen->out_dir, "Output directory")->required();
  gen_cmd->callback([gen] { generate(*gen); });
}

}  // namespace vacc::cli
