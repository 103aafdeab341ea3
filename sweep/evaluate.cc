#include "vacc/sweep/evaluate.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "layer_bench.h"
#include "vacc/compile/compile_model.h"
#include "vacc/driver/device.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/error.h"
#include "vacc/tune/task.h"
#include "vacc/tune/tuner.h"

namespace vacc::sweep {

namespace fs = std::filesystem;

uint64_t Measurement::cycles() const {
  uint64_t n = 0;
  for (const auto &l : layers) n += l.cycles;
  return n;
}

uint64_t Measurement::heuristic_cycles() const {
  if (heuristic_total) return heuristic_total;
  uint64_t n = 0;
  for (const auto &l : layers) n += l.heuristic_cycles;
  return n;
}

int64_t Measurement::accel_useful_macs() const {
  int64_t n = 0;
  for (const auto &l : layers) n += l.useful_macs;
  return n;
}

std::map<std::string, uint64_t> Measurement::counters() const {
  std::map<std::string, uint64_t> sum;
  for (const auto &l : layers)
    for (const auto &[k, v] : l.counters) sum[k] += v;
  return sum;
}

nlohmann::json to_json(const Measurement &m) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto &l : m.layers)
    layers.push_back({{"name", l.name},
                      {"op", l.op},
                      {"useful_macs", l.useful_macs},
                      {"executed_macs", l.executed_macs},
                      {"cycles", l.cycles},
                      {"heuristic_cycles", l.heuristic_cycles},
                      {"counters", l.counters}});
  return {{"engine", m.engine},
          {"layers", layers},
          {"model_macs", m.model_macs},
          {"cpu_steps", m.cpu_steps},
          {"compile_s", m.compile_s},
          {"run_s", m.run_s},
          {"tuned", m.tuned},
          {"tune_s", m.tune_s},
          {"tune_trials", m.tune_trials},
          {"heuristic_total", m.heuristic_total}};
}

Measurement measurement_from_json(const nlohmann::json &j) {
  Measurement m;
  m.engine = j.at("engine").get<std::string>();
  for (const auto &l : j.at("layers")) {
    LayerMeasure x;
    x.name = l.at("name").get<std::string>();
    x.op = l.at("op").get<std::string>();
    x.useful_macs = l.at("useful_macs").get<int64_t>();
    x.executed_macs = l.at("executed_macs").get<int64_t>();
    x.cycles = l.at("cycles").get<uint64_t>();
    x.heuristic_cycles = l.value("heuristic_cycles", uint64_t{0});
    x.counters = l.at("counters").get<std::map<std::string, uint64_t>>();
    m.layers.push_back(std::move(x));
  }
  m.model_macs = j.at("model_macs").get<int64_t>();
  m.cpu_steps = j.at("cpu_steps").get<int>();
  m.compile_s = j.at("compile_s").get<double>();
  m.run_s = j.at("run_s").get<double>();
  m.tuned = j.value("tuned", false);
  m.tune_s = j.value("tune_s", 0.0);
  m.tune_trials = j.value("tune_trials", int64_t{0});
  m.heuristic_total = j.value("heuristic_total", uint64_t{0});
  return m;
}

nlohmann::json to_json(const Workload &w) {
  nlohmann::json j = {{"kind", w.kind == Workload::Kind::kModel ? "model" : "bench"},
          {"name", w.name},
          {"model", w.model},
          {"input", w.input},
          {"calibration", w.calibration},
          {"bench", w.bench},
          {"layers", w.layers},
          {"vthreads", w.vthreads},
          {"batch", w.batch},
          {"tune_trials", w.tune_trials},
          {"tune_strategy", w.tune_strategy}};
  // Only when on, so that the work items of specs without it keep their keys (resumes).
  if (w.tune_tails) j["tune_tails"] = true;
  return j;
}

Workload workload_from_json(const nlohmann::json &j) {
  Workload w;
  w.kind = j.at("kind") == "model" ? Workload::Kind::kModel : Workload::Kind::kConvBench;
  w.name = j.at("name").get<std::string>();
  w.model = j.at("model").get<std::string>();
  w.input = j.at("input").get<std::string>();
  w.calibration = j.at("calibration").get<std::string>();
  w.bench = j.at("bench").get<std::string>();
  w.layers = j.at("layers").get<std::vector<std::string>>();
  w.vthreads = j.at("vthreads").get<int>();
  w.batch = j.at("batch").get<int64_t>();
  w.tune_trials = j.value("tune_trials", int64_t{0});
  w.tune_strategy = j.value("tune_strategy", std::string("anneal"));
  w.tune_tails = j.value("tune_tails", false);
  return w;
}

std::string workload_path(const std::string &path, const std::string &base_dir) {
  if (path.empty() || fs::path(path).is_absolute() || base_dir.empty()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A point's own tuning (the spec's `tune`): the tasks searched in this process.
tune::TuneReport tune_point(const isa::HwConfig &config, const std::vector<tune::TuneTask> &tasks,
                            const Workload &w) {
  tune::TuneOptions o;
  o.trials = w.tune_trials;
  o.strategy = w.tune_strategy;
  o.tails = w.tune_tails;
  o.vthreads = w.vthreads;
  tune::LocalMeasurer measurer;
  return tune::tune(config, tasks, o, measurer);
}

// The workload's package run once on `engine`: its profile.
runtime::RunProfile run_package(const isa::HwConfig &config, const isa::Package &pkg,
                                const Workload &w, const std::string &base_dir,
                                const std::string &engine) {
  std::vector<runtime::HostTensor> inputs;
  for (int32_t index : pkg.inputs) {
    const isa::PackageTensor &t = pkg.tensors.at(static_cast<size_t>(index));
    runtime::HostTensor x;
    x.dtype = t.dtype;
    x.shape = t.shape;
    x.data.assign(static_cast<size_t>(t.bytes()), 0);
    if (!w.input.empty() && pkg.inputs.size() == 1) {
      const graph::Tensor in = compile::read_input_npy(workload_path(w.input, base_dir), t.shape,
                                                       fmt::format("input '{}'", t.name));
      std::memcpy(x.data.data(), in.raw(), x.data.size());
    }
    inputs.push_back(std::move(x));
  }
  driver::DeviceOptions o;
  o.timing_only = engine == "perf";
  auto device = driver::open_device(engine, config, o);
  host::ReferenceKernels host(pkg);
  runtime::GraphExecutor exec(pkg, host, device.get(), config);
  runtime::RunProfile profile;
  exec.run(inputs, &profile);
  return profile;
}

Measurement evaluate_model(const isa::HwConfig &config, const Workload &w,
                           const std::string &base_dir, const std::string &engine) {
  const std::string model = workload_path(w.model, base_dir);
  Measurement m;
  m.engine = engine;

  auto t0 = Clock::now();
  compile::CompileOptions co;
  co.batch = w.batch;
  co.vthreads = w.vthreads;
  co.calibration = workload_path(w.calibration, base_dir);
  // Tuned: the point's own search, and the heuristic's schedules run the same way beside it
  // (the same compile path and graph run, only the schedules differ).
  std::map<std::string, uint64_t> heuristic_cycles;  // by step name
  if (w.tune_trials > 0) {
    const tune::TuneReport tuned = tune_point(config, tune::model_tasks(model, config, co), w);
    m.tuned = true;
    m.tune_s = tuned.seconds;
    m.tune_trials = tuned.measured;
    compile::CompileOptions heuristic = co;
    heuristic.use_tuning_db = false;
    const isa::Package hp = compile::compile_model(model, config, heuristic).package;
    for (const auto &s : run_package(config, hp, w, base_dir, engine).steps)
      if (s.where == isa::StepTarget::kAccel) {
        heuristic_cycles[s.name] = s.cycles.value_or(0);
        m.heuristic_total += s.cycles.value_or(0);
      }
    co.tuned = tuned.lookup("the sweep's tuning");
    t0 = Clock::now();
  }
  const isa::Package pkg = compile::compile_model(model, config, co).package;
  m.compile_s = seconds_since(t0);
  // The compiler records each step's own MACs (the ONNX operator's, before channels are
  // padded to the GEMM core's blocks) beside the executed ones.
  for (const isa::PackageStep &s : pkg.steps) m.model_macs += s.model_macs;

  t0 = Clock::now();
  const runtime::RunProfile profile = run_package(config, pkg, w, base_dir, engine);
  m.run_s = seconds_since(t0);

  for (const auto &s : profile.steps) {
    if (s.where != isa::StepTarget::kAccel) {
      ++m.cpu_steps;
      continue;
    }
    LayerMeasure l;
    l.name = s.name;
    l.op = s.op;
    const isa::PackageStep &step = pkg.steps.at(s.index);
    l.executed_macs = step.macs;
    l.useful_macs = step.model_macs;
    l.cycles = s.cycles.value_or(0);
    if (const auto it = heuristic_cycles.find(s.name); it != heuristic_cycles.end())
      l.heuristic_cycles = it->second;
    l.counters = s.counters;
    m.layers.push_back(std::move(l));
  }
  return m;
}

Measurement evaluate_conv_bench(const isa::HwConfig &config, const Workload &w,
                                const std::string &engine) {
  std::vector<bench::ConvLayerSpec> layers;
  for (const auto &l : bench::resnet18_convs())
    if (w.layers.empty() || std::find(w.layers.begin(), w.layers.end(), l.name) != w.layers.end())
      layers.push_back(l);
  bench::LayerBenchOptions o;
  o.engine = engine;
  o.timing_only = engine == "perf";
  o.vthreads = w.vthreads;
  Measurement m;
  m.engine = engine;
  std::optional<tune::TuneReport> tuned;
  if (w.tune_trials > 0) {
    std::vector<lower::Layer> accel;
    for (const auto &spec : layers)
      accel.push_back({spec.name, bench::accel_conv_params(config, spec, o.fold)});
    tuned = tune_point(config, tune::group_tasks(accel), w);
    m.tuned = true;
    m.tune_s = tuned->seconds;
    m.tune_trials = tuned->measured;
  }
  const lower::TunedLookup lookup = tuned ? tuned->lookup("the sweep's tuning") : nullptr;
  for (const auto &spec : layers) {
    const lower::Layer layer{spec.name, bench::accel_conv_params(config, spec, o.fold)};
    o.schedule.reset();
    if (lookup)
      if (const auto t = lookup(layer)) o.schedule = t->schedule;
    const bench::LayerResult r = bench::run_conv_layer(config, spec, o);
    uint64_t heuristic = 0;
    if (tuned) {
      // The heuristic's schedule run the same way beside the tuned one.
      bench::LayerBenchOptions h = o;
      h.schedule.reset();
      heuristic = o.schedule ? bench::run_conv_layer(config, spec, h).cycles.value_or(0)
                             : r.cycles.value_or(0);
    }
    if (r.mismatches)
      fail("layer {}: {} of {} outputs differ from the reference", r.name, r.mismatches, r.outputs);
    LayerMeasure l;
    l.name = r.name;
    l.op = "conv2d";
    l.useful_macs = static_cast<int64_t>(r.macs);
    l.executed_macs = static_cast<int64_t>(r.executed_macs);
    l.cycles = r.cycles.value_or(0);
    l.heuristic_cycles = heuristic;
    l.counters = r.counters;
    m.model_macs += l.useful_macs;
    m.compile_s += r.compile_s;
    m.run_s += r.run_s;
    m.layers.push_back(std::move(l));
  }
  return m;
}

}  // namespace

Measurement evaluate(const isa::HwConfig &config, const Workload &workload,
                     const std::string &base_dir, const std::string &engine) {
  if (workload.kind == Workload::Kind::kConvBench)
    return evaluate_conv_bench(config, workload, engine);
  return evaluate_model(config, workload, base_dir, engine);
}

}  // namespace vacc::sweep
