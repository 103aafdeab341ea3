#include "vacc/cli/model_runner.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "vacc/cli/output.h"
#include "vacc/host/gpu_kernels.h"
#include "vacc/host/llvm_kernels.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/codegen/cpu/jit.h"
#include "vacc/codegen/cpu/kernel_cache.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"

#ifndef VACC_MODELS_DIR
#define VACC_MODELS_DIR "models"
#endif

namespace vacc::cli {

namespace {

std::string extension(const std::string &path) {
  return std::filesystem::path(path).extension().string();
}

std::string count_text(int64_t n) {
  if (n >= 10'000'000'000) return fmt::format("{:.1f} G", n / 1e9);
  if (n >= 10'000'000) return fmt::format("{:.1f} M", n / 1e6);
  if (n >= 10'000) return fmt::format("{:.1f} k", n / 1e3);
  return fmt::format("{}", n);
}

std::optional<double> utilization(int64_t macs, std::optional<uint64_t> cycles,
                                  const isa::HwConfig &config) {
  if (!cycles || *cycles == 0) return std::nullopt;
  return double(macs) / (double(*cycles) * double(config.peak_macs_per_cycle()));
}

}  // namespace

std::string bundled_model() {
  return std::string(VACC_MODELS_DIR) + "/fashion_mnist_cnn.onnx";
}
std::string bundled_samples() {
  return std::string(VACC_MODELS_DIR) + "/fashion_mnist_samples.npy";
}
std::string bundled_labels() {
  return std::string(VACC_MODELS_DIR) + "/fashion_mnist_labels.npy";
}

const char *fashion_mnist_class(int64_t label) {
  static const char *kNames[] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                 "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return label >= 0 && label < 10 ? kNames[label] : "?";
}

isa::Package load_model(const std::string &path, const isa::HwConfig &config,
                        const compile::CompileOptions &options, bool quiet) {
  if (!path_exists(path))
    fail("{}: no such model file (give an .onnx model or a .vpkg package)", path);
  if (isa::is_package_file(path)) {
    isa::Package p = isa::load_package(path);
    p.check_config(config, path);
    return p;
  }
  if (extension(path) == ".vpkg") return isa::load_package(path);  // reports the bad magic
  if (extension(path) != ".onnx")
    fail(
        "{}: unknown model file: expected an ONNX model (.onnx) or a package written by "
        "`vacc compile` (.vpkg)",
        path);
  compile::CompileOptions o = options;
  if (quiet) o.log = nullptr;
  return compile::compile_model(path, config, o).package;
}

void check_compile_args(const std::string &model, int64_t batch, int vthreads) {
  if (!path_exists(model)) fail("{}: no such model file", model);
  if (extension(model) != ".onnx") fail("{}: vacc compile takes an ONNX model (.onnx)", model);
  if (batch < 1) fail("--batch {}: must be at least 1", batch);
  if (vthreads != 1 && vthreads != 2) fail("--vthreads {}: choose 1 or 2", vthreads);
}

std::unique_ptr<runtime::HostKernels> make_host_kernels(const std::string &name,
                                                        const isa::Package &package,
                                                        const std::string &fallback) {
  if (fallback != "cpu" && fallback != "gpu") fail("--fallback '{}': choose cpu or gpu", fallback);
  if (name != "reference" && name != "llvm") fail("--cpu '{}': choose reference or llvm", name);
  if (fallback == "gpu" || name == "llvm")
    codegen::cpu::Jit::global().use_disk_cache(codegen::cpu::default_kernel_cache_dir());
  if (fallback == "gpu") return std::make_unique<host::GpuKernels>(package);
  if (name == "reference") return std::make_unique<host::ReferenceKernels>(package);
  return std::make_unique<host::LlvmKernels>(package);
}

KernelPreparation prepare_kernels(runtime::HostKernels &host) {
  const codegen::cpu::JitStats before = codegen::cpu::Jit::global().stats();
  const auto t0 = std::chrono::steady_clock::now();
  host.prepare();
  KernelPreparation p;
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const codegen::cpu::JitStats after = codegen::cpu::Jit::global().stats();
  p.compiled = after.compiled - before.compiled;
  p.disk_hits = after.disk_hits - before.disk_hits;
  p.reused = after.cache_hits - before.cache_hits;
  p.damaged = after.disk_damaged - before.disk_damaged;
  return p;
}

std::string KernelPreparation::text() const {
  std::string s = fmt::format(
      "compile {:.3f} s ({} kernels compiled, {} from the disk cache, {} "
      "shared with other steps",
      seconds, compiled, disk_hits, reused);
  if (damaged) s += fmt::format(", {} damaged cache entries replaced", damaged);
  return s + ")";
}

nlohmann::ordered_json KernelPreparation::json() const {
  nlohmann::ordered_json j;
  j["seconds"] = seconds;
  j["compiled"] = compiled;
  j["disk_cache_hits"] = disk_hits;
  j["shared"] = reused;
  j["damaged_entries"] = damaged;
  return j;
}

std::unique_ptr<driver::Device> open_engine(const std::string &engine, const isa::HwConfig &config,
                                            const driver::DeviceOptions &options) {
  if (engine != "fsim" && engine != "perf" && engine != "rtl" && engine != "xrt")
    fail(
        "--engine '{}': choose rtl (cycle-accurate), perf (fsim plus the RTL's timing, fast) "
        "or fsim (functional, fast)",
        engine);
  return driver::open_device(engine, config, options);
}

namespace {

// "tuned h7 w14 oc2 ic4 vt2" from a package step's "tuned: h7 w14 oc2 ic4 vt2 (source)".
std::string schedule_column(const std::string &schedule) {
  if (schedule.empty()) return "-";
  std::string s = schedule;
  if (const size_t colon = s.find(": "); colon != std::string::npos) s.erase(colon, 1);
  if (const size_t paren = s.find(" ("); paren != std::string::npos) s.erase(paren);
  return s;
}

}  // namespace

std::string profile_table(const runtime::RunProfile &profile, const isa::HwConfig &config) {
  std::vector<std::vector<std::string>> rows = {
      {"#", "layer", "op", "where", "MACs", "executed", "cycles", "util", "ms", "schedule"}};
  for (const auto &s : profile.steps) {
    auto u = utilization(s.macs, s.cycles, config);
    rows.push_back(
        {std::to_string(s.index), s.name, s.op, isa::step_target_name(s.where),
         s.macs ? count_text(s.macs) : "-", s.executed_macs ? count_text(s.executed_macs) : "-",
         s.cycles ? std::to_string(*s.cycles) : "-", u ? fmt::format("{:.1f}%", 100 * *u) : "-",
         fmt::format("{:.2f}", 1000 * s.seconds), schedule_column(s.schedule)});
  }
  std::string out = format_table(rows);
  const int64_t accel = profile.macs(isa::StepTarget::kAccel);
  const int64_t executed = profile.executed_macs(isa::StepTarget::kAccel);
  const int64_t cpu = profile.macs(isa::StepTarget::kCpu);
  const int accel_steps = profile.steps_on(isa::StepTarget::kAccel);
  out += fmt::format(
      "\ntotal: {} steps, {} on the accelerator in {} program{}, {} host<->accelerator "
      "transitions; MACs {} accel (executed {}), {} cpu",
      profile.steps.size(), accel_steps, profile.programs(), profile.programs() == 1 ? "" : "s",
      profile.transitions(), count_text(accel), count_text(executed), count_text(cpu));
  if (auto c = profile.cycles()) {
    auto u = utilization(accel, c, config);
    out += fmt::format("; {} accelerator cycles ({:.3f} ms at {} MHz), utilization {:.1f}%", *c,
                       *c / (config.clock_mhz * 1e3), config.clock_mhz, 100 * u.value_or(0));
  } else {
    out += "; cycles: - (the engine counts none)";
  }
  out += fmt::format("; {:.3f} s wall\n", profile.seconds);
  for (const auto &s : profile.steps)
    if (!s.note.empty()) out += fmt::format("note: step {} ({}): {}\n", s.index, s.name, s.note);
  return out;
}

nlohmann::ordered_json profile_json(const runtime::RunProfile &profile,
                                    const isa::HwConfig &config) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const auto &s : profile.steps) {
    nlohmann::ordered_json l;
    l["index"] = s.index;
    l["layer"] = s.name;
    l["op"] = s.op;
    l["where"] = isa::step_target_name(s.where);
    l["macs"] = s.macs;
    l["executed_macs"] = s.executed_macs;
    l["cycles"] = s.cycles ? nlohmann::ordered_json(*s.cycles) : nlohmann::ordered_json();
    if (s.where == isa::StepTarget::kAccel) l["program"] = s.program;
    if (s.overlap_cycles) l["overlap_cycles"] = *s.overlap_cycles;
    auto u = utilization(s.macs, s.cycles, config);
    l["utilization"] = u ? nlohmann::ordered_json(*u) : nlohmann::ordered_json();
    l["seconds"] = s.seconds;
    if (!s.counters.empty()) l["counters"] = s.counters;
    if (!s.note.empty()) l["note"] = s.note;
    if (!s.schedule.empty()) l["schedule"] = s.schedule;
    layers.push_back(std::move(l));
  }
  j["layers"] = std::move(layers);
  nlohmann::ordered_json t;
  t["steps"] = profile.steps.size();
  t["accel_steps"] = profile.steps_on(isa::StepTarget::kAccel);
  t["transitions"] = profile.transitions();
  t["programs"] = profile.programs();
  t["macs_accel"] = profile.macs(isa::StepTarget::kAccel);
  t["executed_macs_accel"] = profile.executed_macs(isa::StepTarget::kAccel);
  t["macs_cpu"] = profile.macs(isa::StepTarget::kCpu);
  auto c = profile.cycles();
  t["cycles"] = c ? nlohmann::ordered_json(*c) : nlohmann::ordered_json();
  auto u = utilization(profile.macs(isa::StepTarget::kAccel), c, config);
  t["utilization"] = u ? nlohmann::ordered_json(*u) : nlohmann::ordered_json();
  t["seconds"] = profile.seconds;
  j["total"] = std::move(t);
  return j;
}

}  // namespace vacc::cli
