// `vacc bench model MODEL.onnx --engine rtl|perf|fsim [--config C] [--json]`: a whole model
// compiled exactly as `vacc compile` compiles it (or a .vpkg it wrote), run once through the
// runtime, and each accelerator layer held against its roofline: the larger of its compute
// bound (the model's own MACs at the config's peak MACs per cycle) and its DRAM bound (the
// bytes its command list moves — data, micro-ops and instructions — at the config's bytes
// per cycle). Per layer and in total: cycles, the ideal, which bound it is, the ratio of
// cycles to the ideal, and utilization of the model's own MACs beside the executed ones.
// With --float: warm runs of the whole float model on the CPU backend (bench_float_model.h).
#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "bench_float_model.h"
#include "commands.h"
#include "vacc/cli/calibration_options.h"
#include "vacc/cli/model_runner.h"
#include "vacc/cli/output.h"
#include "vacc/cli/tuning_options.h"
#include "vacc/isa/command.h"
#include "vacc/lower/lower.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace vacc::cli {

namespace {

struct ModelBenchArgs {
  std::string model;
  std::string engine = "rtl";
  std::string config = "default";
  std::string cpu = "reference";
  std::string fallback = "cpu";
  std::string input;
  CalibrationArgs calibration;
  TuningArgs tuning;
  std::string timeline_dir;  // rtl, perf: one timeline per accelerator step
  int64_t batch = 1;
  uint32_t seed = 1;
  bool json = false, no_build = false;
  bool float_model = false;  // the float model on the CPU: bench_float_model.h
  int threads = 0, runs = 20;
};

// One step's place against its roofline.
struct LayerFigures {
  const runtime::StepProfile *step = nullptr;
  uint64_t dram_bytes = 0;  // what its command list moves
  uint64_t compute_cycles = 0, dram_cycles = 0;
  std::optional<uint64_t> cycles;

  uint64_t ideal() const { return std::max(compute_cycles, dram_cycles); }
  const char *bound() const { return dram_cycles > compute_cycles ? "dram" : "compute"; }
};

uint64_t ceil_div(uint64_t a, uint64_t b) {
  return b ? (a + b - 1) / b : 0;
}

std::optional<double> ratio(std::optional<uint64_t> cycles, uint64_t ideal) {
  if (!cycles || !ideal) return std::nullopt;
  return double(*cycles) / double(ideal);
}

std::optional<double> utilization(int64_t macs, std::optional<uint64_t> cycles,
                                  const isa::HwConfig &c) {
  if (!cycles || !*cycles) return std::nullopt;
  return double(macs) / (double(*cycles) * double(c.peak_macs_per_cycle()));
}

template <typename T>
nlohmann::ordered_json or_null(const std::optional<T> &v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

std::string opt_text(const std::optional<double> &v, const char *pattern) {
  return v ? fmt::format(fmt::runtime(pattern), *v) : "-";
}

std::string percent(const std::optional<double> &v) {
  return v ? fmt::format("{:.1f}%", 100 * *v) : "-";
}

void run_model_bench(const ModelBenchArgs &a) {
  if (a.batch < 1) fail("--batch {}: must be at least 1", a.batch);
  const isa::HwConfig config = load_named_config(a.config);
  compile::CompileOptions co;  // what `vacc compile` passes for the same options
  apply_calibration_options(a.calibration, &co);
  apply_tuning_options(a.tuning, &co);
  co.batch = a.batch;
  const isa::Package pkg = load_model(a.model, config, co, /*quiet=*/true);
  const bool has_accel = pkg.accelerator_steps() > 0;
  driver::DeviceOptions device_options;
  device_options.build_rtl_model = !a.no_build;
  if (!a.timeline_dir.empty()) {
    if (a.engine != "rtl" && a.engine != "perf")
      fail("--timeline needs --engine rtl or perf (engine is '{}')", a.engine);
    std::filesystem::create_directories(a.timeline_dir);
    // Each device program is one run; the simulators number the files by run.
    device_options.timeline_path = a.timeline_dir + "/run_{run}.json";
  }
  std::unique_ptr<driver::Device> device = open_engine(a.engine, config, device_options);
  if (!has_accel) device.reset();
  auto host = make_host_kernels(a.cpu, pkg, a.fallback);
  runtime::GraphExecutor exec(pkg, *host, device.get(), config);
  runtime::RunProfile profile;
  exec.run({bench_input(a.model, a.input, a.seed, pkg)}, &profile);

  std::vector<LayerFigures> layers;
  LayerFigures total;
  runtime::StepProfile total_step;
  double cpu_seconds = 0;
  int cpu_steps = 0;
  bool all_cycles = true;
  for (const auto &s : profile.steps) {
    const isa::PackageStep &ps = pkg.steps[s.index];
    if (!ps.commands) {
      cpu_seconds += s.seconds;
      ++cpu_steps;
      continue;
    }
    LayerFigures f;
    f.step = &s;
    const lower::Traffic t =
        lower::traffic_of(isa::deserialize(pkg.blobs.at(*ps.commands)), config);
    f.dram_bytes = t.data_bytes() + t.uop_bytes + t.insn_bytes;
    f.compute_cycles = ceil_div(s.macs, config.peak_macs_per_cycle());
    f.dram_cycles = ceil_div(f.dram_bytes, config.mem_bytes_per_cycle);
    f.cycles = s.cycles;
    layers.push_back(f);
    total_step.macs += s.macs;
    total_step.executed_macs += s.executed_macs;
    total.dram_bytes += f.dram_bytes;
    total.compute_cycles += f.compute_cycles;
    total.dram_cycles += f.dram_cycles;
    all_cycles = all_cycles && s.cycles.has_value();
    if (s.cycles) total.cycles = total.cycles.value_or(0) + *s.cycles;
  }
  if (!all_cycles) total.cycles.reset();
  // The layers run one after another: the model's ideal is the sum of theirs.
  uint64_t total_ideal = 0;
  for (const auto &f : layers) total_ideal += f.ideal();

  if (!a.timeline_dir.empty()) {
    // Name each program's timeline after its first step and layer.
    size_t run = 0;
    for (const LayerFigures &f : layers) {
      if (f.step->program != f.step->index) continue;
      const std::string from = fmt::format("{}/run_{:03}.json", a.timeline_dir, run++);
      const std::string to =
          a.timeline_dir + "/" + dump_name(f.step->index, f.step->name) + ".json";
      std::filesystem::rename(from, to);
    }
  }
  if (a.json) {
    nlohmann::ordered_json jl = nlohmann::ordered_json::array();
    for (const auto &f : layers) {
      const auto &s = *f.step;
      nlohmann::ordered_json j;
      j["index"] = s.index;
      j["layer"] = s.name;
      j["op"] = s.op;
      j["program"] = s.program;
      j["macs"] = s.macs;
      j["executed_macs"] = s.executed_macs;
      j["dram_bytes"] = f.dram_bytes;
      j["compute_cycles"] = f.compute_cycles;
      j["dram_cycles"] = f.dram_cycles;
      j["ideal_cycles"] = f.ideal();
      j["bound"] = f.bound();
      j["cycles"] = or_null(f.cycles);
      j["ratio_to_ideal"] = or_null(ratio(f.cycles, f.ideal()));
      j["utilization"] = or_null(utilization(s.macs, f.cycles, config));
      j["seconds"] = s.seconds;
      jl.push_back(std::move(j));
    }
    nlohmann::ordered_json t;
    t["accel_steps"] = layers.size();
    t["macs"] = total_step.macs;
    t["executed_macs"] = total_step.executed_macs;
    t["dram_bytes"] = total.dram_bytes;
    t["compute_cycles"] = total.compute_cycles;
    t["dram_cycles"] = total.dram_cycles;
    t["ideal_cycles"] = total_ideal;
    t["cycles"] = or_null(total.cycles);
    t["ratio_to_ideal"] = or_null(ratio(total.cycles, total_ideal));
    t["utilization"] = or_null(utilization(total_step.macs, total.cycles, config));
    t["cpu_steps"] = cpu_steps;
    t["cpu_seconds"] = cpu_seconds;
    t["seconds"] = profile.seconds;
    nlohmann::ordered_json out;
    out["benchmark"] = "model";
    out["model"] = a.model;
    out["config"] = config.name;
    out["engine"] = a.engine;
    out["cpu"] = host->name();
    out["peak_macs_per_cycle"] = config.peak_macs_per_cycle();
    out["dram_bytes_per_cycle"] = config.mem_bytes_per_cycle;
    out["layers"] = std::move(jl);
    out["total"] = std::move(t);
    fmt::print("{}\n", out.dump(2));
    return;
  }

  fmt::print("model {} ({} steps, {} on the accelerator)  config {}  engine {}\n", a.model,
             pkg.steps.size(), layers.size(), config.name, a.engine);
  fmt::print(
      "peak {} MACs/cycle, DRAM {} B/cycle; MACs are the model's own, 'executed' the GEMM "
      "core's (channels padded to its blocks, a tiling's repeated work)\n\n",
      config.peak_macs_per_cycle(), config.mem_bytes_per_cycle);
  std::vector<std::vector<std::string>> rows = {{"#", "layer", "op", "MACs", "executed",
                                                 "DRAM bytes", "cycles", "ideal", "bound",
                                                 "x ideal", "util"}};
  for (const auto &f : layers) {
    const auto &s = *f.step;
    rows.push_back({std::to_string(s.index), s.name, s.op, std::to_string(s.macs),
                    std::to_string(s.executed_macs), std::to_string(f.dram_bytes),
                    f.cycles ? std::to_string(*f.cycles) : "-", std::to_string(f.ideal()),
                    f.bound(), opt_text(ratio(f.cycles, f.ideal()), "{:.2f}"),
                    percent(utilization(s.macs, f.cycles, config))});
  }
  fmt::print("{}", format_table(rows));
  fmt::print(
      "\ntotal: {} MACs (executed {}), {} DRAM bytes; ideal {} cycles (compute {}, DRAM "
      "{})",
      total_step.macs, total_step.executed_macs, total.dram_bytes, total_ideal,
      total.compute_cycles, total.dram_cycles);
  if (total.cycles) {
    fmt::print("; {} cycles, {:.2f}x ideal, utilization {:.1f}%\n", *total.cycles,
               *ratio(total.cycles, total_ideal),
               100 * utilization(total_step.macs, total.cycles, config).value_or(0));
  } else {
    fmt::print("; cycles: - (engine {} counts none)\n", a.engine);
  }
  fmt::print("cpu: {} steps, {:.3f} s wall ({} kernels); run {:.3f} s wall\n", cpu_steps,
             cpu_seconds, host->name(), profile.seconds);
}

}  // namespace

void add_bench_model_command(CLI::App &bench) {
  auto *cmd = bench.add_subcommand(
      "model",
      "A whole model, compiled as `vacc compile` does, run once: per-layer cycles against each "
      "layer's roofline (compute or DRAM bound); with --float, warm runs of the float model on "
      "the CPU backend");
  auto a = std::make_shared<ModelBenchArgs>();
  cmd->add_option("model", a->model, "Model: .onnx (compiled) or .vpkg (from vacc compile)")
      ->required();
  cmd->add_option("--engine", a->engine, "Engine: rtl, perf or fsim (fsim counts no cycles)")
      ->capture_default_str();
  cmd->add_option("--config", a->config, "Config name or YAML path")->capture_default_str();
  cmd->add_option("--cpu", a->cpu,
                  "CPU kernels for the other steps (with --float: for all): reference or llvm "
                  "(default: reference; with --float, llvm)");
  cmd->add_option("--fallback", a->fallback,
                  "Where steps the accelerator does not run go: cpu (--cpu's kernels) or gpu "
                  "(the GPU backend; the LLVM CPU backend for operators it has no kernel for)")
      ->capture_default_str();
  cmd->add_flag("--float", a->float_model,
                "Benchmark the float model on the CPU: kernels compiled once, then --runs warm "
                "runs (median, min, max)");
  cmd->add_option("--threads", a->threads, "--float: CPU backend threads (default: one per core)");
  cmd->add_option("--runs", a->runs, "--float: timed runs after a warm-up")->capture_default_str();
  cmd->add_option("--input", a->input,
                  "Input tensor (.npy, float32); default: uniform [0, 1) data from --seed");
  add_calibration_options(cmd, &a->calibration, ".onnx models: ");
  add_tuning_options(cmd, &a->tuning);
  cmd->add_option("--batch", a->batch, ".onnx models: value of the batch dimension")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the default input")->capture_default_str();
  cmd->add_flag("--json", a->json, "Machine-readable output");
  cmd->add_option("--timeline", a->timeline_dir,
                  "rtl, perf: write each device program's Chrome-trace/Perfetto timeline to "
                  "DIR/<step>_<layer>.json, named after its first step (a program runs a run "
                  "of consecutive accelerator steps; one each with --program-per-layer)");
  add_no_build_flag(cmd, &a->no_build);
  auto *cpu = cmd->get_option("--cpu");
  cmd->callback([a, cpu] {
    if (!a->float_model) {
      if (a->threads || a->runs != 20) fail("--threads and --runs need --float");
      return run_model_bench(*a);
    }
    FloatModelBench f;
    f.model = a->model;
    f.cpu = cpu->count() ? a->cpu : "llvm";
    f.fallback = a->fallback;
    f.input = a->input;
    f.threads = a->threads;
    f.runs = a->runs;
    f.batch = a->batch;
    f.seed = a->seed;
    f.json = a->json;
    run_float_model_bench(f);
  });
}

}  // namespace vacc::cli
