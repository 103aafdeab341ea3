// `vacc sim PROG --engine fsim|perf|rtl`: runs a program file on a simulator and prints counters.
#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "vacc/cli/output.h"
#include "vacc/driver/device.h"
#include "vacc/driver/rtl_device.h"
#include "vacc/support/error.h"
#include "vacc/support/npy.h"

namespace vacc::cli {

namespace {

// A region's bytes as an array of its elements: [elements, rows, columns].
NpyArray region_array(const isa::HwConfig &c, const isa::Program &p, const isa::Region &r,
                      const std::vector<uint8_t> &dram) {
  NpyArray a;
  const uint64_t n = r.elements(c);
  switch (r.mem) {
    case isa::MemId::kInp: a.shape = {int64_t(n), c.batch, c.block_in}; break;
    case isa::MemId::kWgt: a.shape = {int64_t(n), c.block_out, c.block_in}; break;
    case isa::MemId::kAcc:
    case isa::MemId::kOut: a.shape = {int64_t(n), c.batch, c.block_out}; break;
    case isa::MemId::kUop: a.shape = {int64_t(r.bytes)}; break;
  }
  a.dtype = r.mem == isa::MemId::kAcc ? (c.acc_bits == 32 ? "i4" : "i2")
            : r.mem == isa::MemId::kUop ? "u1"
                                        : "i1";
  a.data.assign(dram.begin() + r.offset, dram.begin() + r.offset + r.bytes);
  return a;
}

}  // namespace

void add_sim_command(CLI::App &app) {
  auto *cmd = app.add_subcommand("sim", "Run a program file on a simulator");
  struct Args {
    std::string program, engine = "fsim", config = "default";
    bool json = false;
    std::vector<std::string> dumps;
    std::string wave, timeline;  // rtl (wave, timeline), perf (timeline)
    uint64_t cycle_limit = sim::kDefaultCycleLimit;
    bool timing_only = false;  // perf
    bool no_build = false;     // rtl
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("program", args->program, "Program (.vprog, or .s assembled on the fly)")
      ->required();
  cmd->add_option("--engine", args->engine,
                  "Simulator: fsim (functional), perf (fsim plus the RTL's timing) or rtl "
                  "(cycle-accurate)")
      ->capture_default_str();
  cmd->add_option("--config", args->config, "Hardware config (YAML path or bundled name)")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print JSON instead of text");
  cmd->add_option("--dump", args->dumps, "Write a region after the run: REGION=out.npy");
  auto *wave = cmd->add_option("--wave", args->wave, "rtl: write an FST waveform of the run");
  auto *timeline = cmd->add_option("--timeline", args->timeline,
                                   "rtl, perf: write a Chrome-trace/Perfetto timeline (JSON)");
  cmd->add_option("--cycle-limit", args->cycle_limit,
                  "Stop the run after N cycles (fsim: N operations, i.e. instructions, "
                  "micro-ops and tiles moved; 0: no limit)")
      ->capture_default_str();
  auto *timing_only = cmd->add_flag(
      "--timing-only", args->timing_only,
      "perf: count cycles without computing the data (the regions keep their inputs)");
  add_no_build_flag(cmd, &args->no_build);
  cmd->callback([args, wave, timeline, timing_only] {
    const isa::HwConfig config = load_named_config(args->config);
    const isa::Program program = load_any_program(config, args->program);
    if (args->engine != "rtl" && *wave)
      fail("--wave needs --engine rtl (engine is '{}')", args->engine);
    if (args->engine != "rtl" && args->engine != "perf" && *timeline)
      fail("--timeline needs --engine rtl or perf (engine is '{}')", args->engine);
    if (args->engine != "perf" && *timing_only)
      fail("--timing-only needs --engine perf (engine is '{}')", args->engine);
    driver::DeviceOptions options;
    options.wave_path = args->wave;
    options.timeline_path = args->timeline;
    options.cycle_limit = args->cycle_limit;
    options.timing_only = args->timing_only;
    options.build_rtl_model = !args->no_build;
    auto device = driver::open_device(args->engine, config, options);
    const auto start = std::chrono::steady_clock::now();
    const driver::RunResult result = driver::run_program(*device, program);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    for (const std::string &dump : args->dumps) {
      const auto eq = dump.find('=');
      if (eq == std::string::npos) fail("--dump '{}': expected REGION=FILE.npy", dump);
      const std::string name = dump.substr(0, eq), path = dump.substr(eq + 1);
      const isa::Region *region = program.find_region(name);
      if (!region) {
        std::string known;
        for (const auto &r : program.regions) known += (known.empty() ? "" : ", ") + r.name;
        fail("--dump: the program has no region '{}' (regions: {})", name, known);
      }
      write_npy(path, region_array(config, program, *region, result.dram));
    }

    if (args->json) {
      nlohmann::ordered_json j;
      j["program"] = args->program;
      j["config"] = config.name;
      j["engine"] = device->name();
      j["instructions"] = program.insn_count;
      j["counters"] = result.counters;
      j["wall_seconds"] = seconds;
      fmt::print("{}\n", j.dump(2));
      return;
    }
    fmt::print("program  {} ({} instructions, {} bytes of device memory)\n", args->program,
               program.insn_count, program.dram.size());
    fmt::print("engine   {} on config '{}'\n\n", device->name(), config.name);
    std::vector<std::vector<std::string>> rows = {{"counter", "value"}};
    for (const auto &[name, value] : result.counters)
      rows.push_back({name, fmt::format("{}", value)});
    fmt::print("{}", format_table(rows));
    if (auto it = result.counters.find("cycles"); it != result.counters.end() && it->second) {
      auto macs = result.counters.find("macs");
      if (macs != result.counters.end())
        fmt::print("\nGEMM utilization  {:.1f}% of peak\n",
                   100.0 * macs->second / (double(it->second) * config.peak_macs_per_cycle()));
    }
    fmt::print("\nsimulated in {:.3f} s\n", seconds);
  });
}

}  // namespace vacc::cli
