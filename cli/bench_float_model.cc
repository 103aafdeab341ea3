#include "bench_float_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "vacc/cli/model_runner.h"
#include "vacc/cli/output.h"
#include "vacc/codegen/cpu/thread_pool.h"
#include "vacc/support/error.h"

namespace vacc::cli {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

runtime::HostTensor bench_input(const std::string &model, const std::string &input, uint32_t seed,
                                const isa::Package &p) {
  if (p.inputs.size() != 1)
    fail("{}: the model has {} inputs; vacc bench model feeds one", model, p.inputs.size());
  const isa::PackageTensor &in = p.tensors[p.inputs[0]];
  if (in.dtype != "f32")
    fail("{}: input '{}' is {}; vacc bench model feeds float32", model, in.name, in.dtype);
  runtime::HostTensor h;
  h.dtype = in.dtype;
  h.shape = in.shape;
  if (!input.empty()) {
    const graph::Tensor t =
        compile::read_input_npy(input, in.shape, fmt::format("input '{}' of {}", in.name, model));
    h.data.assign(t.raw(), t.raw() + t.nbytes());
    return h;
  }
  std::vector<float> v(in.elements());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  for (float &x : v) x = dist(rng);
  h.data.resize(v.size() * sizeof(float));
  std::memcpy(h.data.data(), v.data(), h.data.size());
  return h;
}

void run_float_model_bench(const FloatModelBench &a) {
  if (a.runs < 1) fail("--runs {}: must be at least 1", a.runs);
  if (a.threads < 0) fail("--threads {}: must be at least 1 (0: one per core)", a.threads);
  if (a.batch < 1) fail("--batch {}: must be at least 1", a.batch);
  if (isa::is_package_file(a.model))
    fail("--float benchmarks the float model: give the .onnx model rather than the package {}",
         a.model);
  codegen::cpu::set_num_threads(a.threads);
  const isa::HwConfig config = load_named_config("default");
  compile::CompileOptions co;  // what `vacc run --float` compiles
  co.quantize = false;
  co.batch = a.batch;
  if (a.fallback == "gpu") co.cpu_block = 0;  // the GPU's kernels read plain tensors
  const isa::Package pkg = load_model(a.model, config, co, /*quiet=*/true);
  for (const auto &s : pkg.steps)
    VACC_CHECK(!s.commands) << "the float package has an accelerator step: " << s.name;
  auto host = make_host_kernels(a.cpu, pkg, a.fallback);
  const KernelPreparation prep = prepare_kernels(*host);
  runtime::GraphExecutor exec(pkg, *host, nullptr, config);
  const std::vector<runtime::HostTensor> inputs = {bench_input(a.model, a.input, a.seed, pkg)};

  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  exec.run(inputs);  // warm-up: first touches of the arena and the weights
  const double first = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<double> wall;
  std::map<std::string, std::vector<double>> op_seconds;  // per op kind, one sum per run
  std::map<std::string, int> op_steps;
  std::vector<std::vector<double>> step_seconds(pkg.steps.size());
  for (int r = 0; r < a.runs; ++r) {
    runtime::RunProfile profile;
    t0 = Clock::now();
    exec.run(inputs, &profile);
    wall.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    std::map<std::string, double> sums;
    for (const auto &s : profile.steps) {
      sums[s.op] += s.seconds;
      step_seconds[s.index].push_back(s.seconds);
    }
    for (const auto &[op, sec] : sums) op_seconds[op].push_back(sec);
    if (r == 0)
      for (const auto &s : profile.steps) ++op_steps[s.op];
  }
  const double med = median(wall);
  const double lo = *std::min_element(wall.begin(), wall.end());
  const double hi = *std::max_element(wall.begin(), wall.end());
  std::vector<std::pair<double, std::string>> ops;
  for (const auto &[op, v] : op_seconds) ops.emplace_back(median(v), op);
  std::sort(ops.rbegin(), ops.rend());

  if (a.json) {
    nlohmann::ordered_json j;
    j["benchmark"] = "model-float";
    j["model"] = a.model;
    j["cpu"] = host->name();
    j["threads"] = codegen::cpu::num_threads();
    j["steps"] = pkg.steps.size();
    j["compile"] = prep.json();
    j["first_run_seconds"] = first;
    j["runs"] = a.runs;
    j["median_seconds"] = med;
    j["min_seconds"] = lo;
    j["max_seconds"] = hi;
    nlohmann::ordered_json jo = nlohmann::ordered_json::array();
    for (const auto &[sec, op] : ops)
      jo.push_back({{"op", op}, {"steps", op_steps[op]}, {"median_seconds", sec}});
    j["ops"] = std::move(jo);
    nlohmann::ordered_json js = nlohmann::ordered_json::array();
    for (size_t i = 0; i < pkg.steps.size(); ++i)
      js.push_back(
          {{"index", i},
           {"name", pkg.steps[i].name},
           {"op", pkg.steps[i].op},
           {"macs", pkg.steps[i].model_macs},
           {"median_seconds", median(step_seconds[i])},
           {"min_seconds", *std::min_element(step_seconds[i].begin(), step_seconds[i].end())}});
    j["layers"] = std::move(js);
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("model {} (float, {} steps)  CPU kernels: {}, {} threads\n", a.model, pkg.steps.size(),
             host->name(), codegen::cpu::num_threads());
  fmt::print("{}; first run {:.2f} ms\n", prep.text(), 1e3 * first);
  fmt::print("{} warm runs: median {:.2f} ms, min {:.2f} ms, max {:.2f} ms\n\n", a.runs, 1e3 * med,
             1e3 * lo, 1e3 * hi);
  std::vector<std::vector<std::string>> rows = {{"op", "steps", "median ms", "share"}};
  double total = 0;
  for (const auto &[sec, op] : ops) total += sec;
  for (const auto &[sec, op] : ops)
    rows.push_back({op, std::to_string(op_steps[op]), fmt::format("{:.3f}", 1e3 * sec),
                    fmt::format("{:.1f}%", total > 0 ? 100 * sec / total : 0.0)});
  fmt::print("{}", format_table(rows));
}

}  // namespace vacc::cli
