#include "calibration.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include "layer_bench.h"
#include "vacc/cli/model_runner.h"
#include "vacc/driver/perf_device.h"
#include "vacc/driver/rtl_device.h"
#include "vacc/progen/progen.h"
#include "vacc/simulator/perf_sim.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/support/error.h"

namespace vacc::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The two engines side by side, each keeping its last run's timeline.
struct EnginePair {
  EnginePair(const isa::HwConfig &config, bool build_rtl_model)
      : rtl(config, rtl_options(build_rtl_model)), perf(config, perf_options()) {}
  static sim::RtlOptions rtl_options(bool build_rtl_model) {
    sim::RtlOptions o;
    o.record_slices = true;
    o.build_model = build_rtl_model;
    return o;
  }
  static sim::PerfOptions perf_options() {
    sim::PerfOptions o;
    o.record_slices = true;
    return o;
  }
  driver::RtlDevice rtl;
  driver::PerfDevice perf;
};

}  // namespace

std::string describe_divergence(const std::optional<sim::Divergence> &d) {
  if (!d) return "-";
  const char *track = d->track == sim::kGemmUnitTrack ? "compute: GEMM"
                      : d->track == sim::kAluUnitTrack
                          ? "compute: ALU"
                          : isa::engine_name(static_cast<isa::Engine>(d->track));
  return fmt::format("insn {} on {}: rtl {} perf {}", d->index, track, d->reference_start,
                     d->model_start ? fmt::format("{}", *d->model_start) : "never");
}

std::vector<CalibrationRow> calibrate_progen(const isa::HwConfig &config, uint64_t start,
                                             uint64_t count, bool build_rtl_model) {
  sim::RtlOptions ro = EnginePair::rtl_options(build_rtl_model);
  ro.cycle_limit = 2'000'000;
  sim::RtlSim rtl(config, ro);
  sim::PerfOptions po;
  po.record_slices = true;
  sim::PerfSim perf(config, po);
  std::vector<CalibrationRow> rows;
  for (uint64_t seed = start; seed < start + count; ++seed) {
    const isa::Program p = progen::generate_program(config, seed);
    std::vector<uint8_t> a = p.dram, b = p.dram;
    CalibrationRow r;
    r.group = "progen";
    r.workload = fmt::format("seed {}", seed);
    auto t0 = Clock::now();
    rtl.run(a, p.insn_offset, p.insn_count);
    r.rtl_seconds = seconds_since(t0);
    t0 = Clock::now();
    perf.run(b, p.insn_offset, p.insn_count);
    r.perf_seconds = seconds_since(t0);
    r.rtl_cycles = rtl.counters().at("cycles");
    r.perf_cycles = perf.counters().at("cycles");
    r.divergence = sim::first_divergence(rtl.slices(), perf.slices());
    r.same_memory = a == b;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<CalibrationRow> calibrate_convs(const isa::HwConfig &config,
                                            const std::vector<std::string> &layers,
                                            bool build_rtl_model) {
  std::vector<bench::ConvLayerSpec> specs = bench::resnet18_convs();
  if (!layers.empty()) {
    std::vector<bench::ConvLayerSpec> picked;
    for (const std::string &name : layers) {
      auto it = std::find_if(specs.begin(), specs.end(),
                             [&](const bench::ConvLayerSpec &l) { return l.name == name; });
      if (it == specs.end()) fail("--layers: no ResNet-18 conv layer '{}' (C1..C12)", name);
      picked.push_back(*it);
    }
    specs = picked;
  }
  std::vector<CalibrationRow> rows;
  for (const bench::ConvLayerSpec &spec : specs) {
    EnginePair engines(config, build_rtl_model);
    driver::RtlDevice &rtl = engines.rtl;
    driver::PerfDevice &perf = engines.perf;
    bench::LayerBenchOptions o;
    CalibrationRow r;
    r.group = "convs";
    r.workload = spec.name;
    o.device = &rtl;
    const bench::LayerResult a = bench::run_conv_layer(config, spec, o);
    o.device = &perf;
    const bench::LayerResult b = bench::run_conv_layer(config, spec, o);
    r.rtl_cycles = a.counters.at("cycles");
    r.perf_cycles = b.counters.at("cycles");
    r.rtl_seconds = a.run_s;
    r.perf_seconds = b.run_s;
    r.divergence = sim::first_divergence(rtl.sim().slices(), perf.sim().slices());
    r.same_memory = a.mismatches == 0 && b.mismatches == 0;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<CalibrationRow> calibrate_model(const isa::HwConfig &config, const std::string &path,
                                            bool build_rtl_model) {
  compile::CompileOptions co;
  const isa::Package pkg = load_model(path, config, co, /*quiet=*/true);
  if (pkg.inputs.size() != 1) fail("{}: calibrate feeds models with one input", path);
  const isa::PackageTensor &in = pkg.tensors[pkg.inputs[0]];
  runtime::HostTensor x;
  x.dtype = "f32";
  x.shape = in.shape;
  int64_t n = 1;
  for (int64_t d : in.shape) n *= d;
  x.data.resize(static_cast<size_t>(n) * 4);
  if (path == bundled_model()) {
    const graph::Tensor all =
        compile::read_input_npy(bundled_samples(), {256, 1, 28, 28}, "the bundled samples");
    std::memcpy(x.data.data(), all.raw(), x.data.size());
  } else {
    std::mt19937 rng(1);
    std::normal_distribution<float> noise;
    for (int64_t i = 0; i < n; ++i) {
      const float v = noise(rng);
      std::memcpy(x.data.data() + 4 * i, &v, 4);
    }
  }
  EnginePair engines(config, build_rtl_model);
  driver::RtlDevice &rtl = engines.rtl;
  driver::PerfDevice &perf = engines.perf;

  // Each engine's run: per accelerator step, its profile and timeline.
  struct EngineRun {
    runtime::RunProfile profile;
    std::vector<std::vector<sim::InsnSlice>> slices;  // by step index
    std::vector<runtime::HostTensor> outputs;
  };
  auto run_on = [&](driver::Device &device, const std::vector<sim::InsnSlice> &last) {
    EngineRun e;
    e.slices.resize(pkg.steps.size());
    auto host = make_host_kernels("reference", pkg);
    runtime::GraphExecutor exec(pkg, *host, &device, config);
    e.outputs = exec.run({x}, &e.profile, [&](size_t index, const std::vector<const uint8_t *> &) {
      if (pkg.steps[index].commands) e.slices[index] = last;
    });
    return e;
  };
  const EngineRun a = run_on(rtl, rtl.sim().slices());
  const EngineRun b = run_on(perf, perf.sim().slices());
  const std::string group = std::filesystem::path(path).filename().string();
  std::vector<CalibrationRow> rows;
  for (size_t i = 0; i < pkg.steps.size(); ++i) {
    const runtime::StepProfile &sa = a.profile.steps[i], &sb = b.profile.steps[i];
    if (!sa.cycles || !sb.cycles) continue;
    CalibrationRow r;
    r.group = group;
    r.workload = fmt::format("step {} {} ({})", i, sa.name, sa.op);
    r.rtl_cycles = *sa.cycles;
    r.perf_cycles = *sb.cycles;
    r.rtl_seconds = sa.seconds;
    r.perf_seconds = sb.seconds;
    r.divergence = sim::first_divergence(a.slices[i], b.slices[i]);
    r.same_memory = a.outputs.size() == b.outputs.size();
    for (size_t k = 0; r.same_memory && k < a.outputs.size(); ++k)
      r.same_memory = a.outputs[k].data == b.outputs[k].data;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace vacc::cli
