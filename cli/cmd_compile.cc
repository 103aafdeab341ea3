// `vacc compile MODEL.onnx --config C -o MODEL.vpkg`: the whole compiler — import, graph
// passes, int8 quantization with calibration, partitioning, layout packing, memory planning,
// accelerator layers through the tensor compiler and codegen — into one package file.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "vacc/cli/calibration_options.h"
#include "vacc/cli/model_runner.h"
#include "vacc/cli/output.h"
#include "vacc/cli/tuning_options.h"
#include "vacc/driver/device.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace vacc::cli {

namespace {

// DIR/<first step>_<layer>.asm: each device program's instruction stream, as a run submits it.
void write_programs(const isa::Package &package, const isa::HwConfig &config,
                    const std::string &dir) {
  if (package.accelerator_steps() == 0) return;
  std::filesystem::create_directories(dir);
  host::ReferenceKernels kernels(package);
  const std::unique_ptr<driver::Device> device = driver::open_device("fsim", config);
  const runtime::GraphExecutor exec(package, kernels, device.get(), config);
  for (const runtime::ProgramListing &l : exec.program_listings()) {
    const std::string path = dir + "/" + dump_name(l.first, package.steps[l.first].name) + ".asm";
    std::ofstream out(path);
    out << l.text;
    if (!out) fail("{}: cannot write the program listing", path);
  }
}

}  // namespace

void add_compile_command(CLI::App &app) {
  auto *cmd = app.add_subcommand("compile", "Compile an ONNX model into a package (.vpkg)");
  struct Args {
    std::string model, config = "default", output, dump_ir;
    CalibrationArgs calibration;
  TuningArgs tuning;
    int64_t batch = 1;
    int vthreads = 2;
    bool json = false, float_model = false, quiet = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("model", a->model, "ONNX model (.onnx)")->required();
  cmd->add_option("--config", a->config, "Hardware config (YAML path or bundled name)")
      ->capture_default_str();
  cmd->add_option("-o,--output", a->output, "Package to write (default: MODEL.vpkg)");
  cmd->add_option("--dump-ir", a->dump_ir,
                  "Write the graph after every graph pass (DIR/graph) and the loop IR after "
                  "every pass of every accelerator layer (DIR/layers), and each device program's "
                  "instruction stream as a run submits it (DIR/programs)");
  add_calibration_options(cmd, &a->calibration);
  add_tuning_options(cmd, &a->tuning);
  cmd->add_option("--batch", a->batch, "Value of the model's batch dimension")
      ->capture_default_str();
  cmd->add_option("--vthreads", a->vthreads, "Virtual threads per accelerator layer (1 or 2)")
      ->capture_default_str();
  cmd->add_flag("--float", a->float_model, "Compile the float model (every step on the CPU)");
  cmd->add_flag("--json", a->json, "Print a JSON summary instead of text");
  cmd->add_flag("-q,--quiet", a->quiet, "Print only the summary line");
  cmd->callback([a] {
    const isa::HwConfig config = load_named_config(a->config);
    check_compile_args(a->model, a->batch, a->vthreads);
    const std::string out =
        a->output.empty() ? std::filesystem::path(a->model).replace_extension(".vpkg").string()
                          : a->output;
    compile::CompileOptions o;
    o.batch = a->batch;
    o.quantize = !a->float_model;
    apply_calibration_options(a->calibration, &o);
    apply_tuning_options(a->tuning, &o);
    o.dump_dir = a->dump_ir;
    o.vthreads = a->vthreads;
    if (!a->json && !a->quiet) o.log = [](const std::string &line) { fmt::print("{}\n", line); };
    const compile::CompiledModel m = compile::compile_model(a->model, config, o);
    isa::save_package(m.package, out);
    const auto bytes = std::filesystem::file_size(out);
    const int lowered = m.package.accelerator_steps();
    if (a->json) {
      nlohmann::ordered_json j;
      j["model"] = a->model;
      j["package"] = out;
      j["config"] = config.name;
      j["bytes"] = bytes;
      j["steps"] = m.package.steps.size();
      j["accelerator_steps"] = lowered;
      j["arena_bytes"] = m.package.arena_bytes;
      j["calibration"] = m.calibration_source;
      j["seconds"] = m.seconds;
      nlohmann::ordered_json stages = nlohmann::ordered_json::array();
      for (const auto &s : m.stages)
        stages.push_back({{"name", s.name}, {"ms", s.milliseconds}, {"summary", s.summary}});
      j["stages"] = std::move(stages);
      fmt::print("{}\n", j.dump(2));
      return;
    }
    fmt::print(
        "{}wrote {} ({} bytes): {} steps, {} on the accelerator, arena {} bytes, "
        "config '{}', compiled in {:.2f} s\n",
        a->quiet ? "" : "\n", out, bytes, m.package.steps.size(), lowered, m.package.arena_bytes,
        config.name, m.seconds);
    if (!a->dump_ir.empty()) write_programs(m.package, config, a->dump_ir + "/programs");
    if (!a->dump_ir.empty() && !a->quiet) fmt::print("IR dumps under {}\n", a->dump_ir);
  });
}

}  // namespace vacc::cli
