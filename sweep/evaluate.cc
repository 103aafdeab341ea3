#include "vacc/sweep/evaluate.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>

#include "layer_bench.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/driver/device.h"
#include "vacc/package/compile_model.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/error.h"

namespace vacc::sweep {

namespace fs = std::filesystem;

uint64_t Measurement::cycles() const {
  uint64_t n = 0;
  for (const auto &l : layers) n += l.cycles;
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
                      {"counters", l.counters}});
  return {{"engine", m.engine},       {"layers", layers},         {"model_macs", m.model_macs},
          {"cpu_steps", m.cpu_steps}, {"compile_s", m.compile_s}, {"run_s", m.run_s}};
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
    x.counters = l.at("counters").get<std::map<std::string, uint64_t>>();
    m.layers.push_back(std::move(x));
  }
  m.model_macs = j.at("model_macs").get<int64_t>();
  m.cpu_steps = j.at("cpu_steps").get<int>();
  m.compile_s = j.at("compile_s").get<double>();
  m.run_s = j.at("run_s").get<double>();
  return m;
}

nlohmann::json to_json(const Workload &w) {
  return {{"kind", w.kind == Workload::Kind::kModel ? "model" : "bench"},
          {"name", w.name},
          {"model", w.model},
          {"input", w.input},
          {"calibration", w.calibration},
          {"bench", w.bench},
          {"layers", w.layers},
          {"vthreads", w.vthreads},
          {"batch", w.batch}};
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

Measurement evaluate_model(const isa::HwConfig &config, const Workload &w,
                           const std::string &base_dir, const std::string &engine) {
  const std::string model = workload_path(w.model, base_dir);
  Measurement m;
  m.engine = engine;

  auto t0 = Clock::now();
  package::CompileOptions co;
  co.batch = w.batch;
  co.vthreads = w.vthreads;
  co.calibration = workload_path(w.calibration, base_dir);
  const isa::Package pkg = package::compile_model(model, config, co).package;
  m.compile_s = seconds_since(t0);
  // The compiler records each step's own MACs (the ONNX operator's, before channels are
  // padded to the GEMM core's blocks) beside the executed ones.
  for (const isa::PackageStep &s : pkg.steps) m.model_macs += s.model_macs;

  std::vector<runtime::HostTensor> inputs;
  for (int32_t index : pkg.inputs) {
    const isa::PackageTensor &t = pkg.tensors.at(static_cast<size_t>(index));
    runtime::HostTensor x;
    x.dtype = t.dtype;
    x.shape = t.shape;
    x.data.assign(static_cast<size_t>(t.bytes()), 0);
    if (!w.input.empty() && pkg.inputs.size() == 1) {
      const graph::Tensor in = package::read_input_npy(workload_path(w.input, base_dir), t.shape,
                                                       fmt::format("input '{}'", t.name));
      std::memcpy(x.data.data(), in.raw(), x.data.size());
    }
    inputs.push_back(std::move(x));
  }

  t0 = Clock::now();
  driver::DeviceOptions o;
  o.timing_only = engine == "perf";
  auto device = driver::open_device(engine, config, o);
  host::ReferenceKernels host(pkg);
  runtime::GraphExecutor exec(pkg, host, device.get(), config);
  runtime::RunProfile profile;
  exec.run(inputs, &profile);
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
  for (const auto &spec : layers) {
    const bench::LayerResult r = bench::run_conv_layer(config, spec, o);
    if (r.mismatches)
      fail("layer {}: {} of {} outputs differ from the reference", r.name, r.mismatches, r.outputs);
    LayerMeasure l;
    l.name = r.name;
    l.op = "conv2d";
    l.useful_macs = static_cast<int64_t>(r.macs);
    l.executed_macs = static_cast<int64_t>(r.executed_macs);
    l.cycles = r.cycles.value_or(0);
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
