// Wall time of a model's accelerator steps on each engine: fsim, perf, perf timing-only and
// rtl, in one process one after the other (so the ratios are taken under one machine load),
// each the best of --repeat runs, with their cycle counts (perf's must equal rtl's). The
// figures are the graph executor's own per-step wall times, the same ones `vacc run --json`
// reports; CPU steps are left out.
//   bench_perf_speed [MODEL.onnx|MODEL.vpkg] [CONFIG] [--no-rtl] [--repeat N]
// Default: the bundled Fashion-MNIST CNN on the default config.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "vacc/compile/compile_model.h"
#include "vacc/driver/device.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/isa/package.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/error.h"

namespace {

using namespace vacc;

struct Measure {
  double seconds = 0;
  uint64_t cycles = 0;
};

Measure run(const isa::Package &pkg, const isa::HwConfig &config, const std::string &engine,
            bool timing_only, const runtime::HostTensor &x) {
  driver::DeviceOptions o;
  o.timing_only = timing_only;
  auto device = driver::open_device(engine, config, o);
  host::ReferenceKernels host(pkg);
  runtime::GraphExecutor exec(pkg, host, device.get(), config);
  runtime::RunProfile profile;
  exec.run({x}, &profile);
  Measure m;
  for (const auto &s : profile.steps) {
    if (s.where != isa::StepTarget::kAccel) continue;
    m.seconds += s.seconds;
    m.cycles += s.cycles.value_or(0);
  }
  return m;
}

}  // namespace

int main(int argc, char **argv) {
  try {
    std::string model = std::string(VACC_BENCH_MODELS_DIR) + "/fashion_mnist_cnn.onnx";
    std::string config_name = "default";
    bool with_rtl = true;
    int positional = 0, repeat = 3;
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--no-rtl") == 0)
        with_rtl = false;
      else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
        repeat = std::atoi(argv[++i]);
      else if (positional++ == 0)
        model = argv[i];
      else
        config_name = argv[i];
    }
    const isa::HwConfig config = isa::load_config(isa::resolve_config_path(config_name));
    const isa::Package pkg = isa::is_package_file(model)
                                 ? isa::load_package(model)
                                 : compile::compile_model(model, config).package;
    const isa::PackageTensor &in = pkg.tensors.at(pkg.inputs.at(0));
    runtime::HostTensor x;
    x.shape = in.shape;
    int64_t n = 1;
    for (int64_t d : in.shape) n *= d;
    x.data.resize(static_cast<size_t>(n) * 4);
    std::mt19937 rng(1);
    std::normal_distribution<float> noise;
    for (int64_t i = 0; i < n; ++i) {
      const float v = noise(rng);
      std::memcpy(x.data.data() + 4 * i, &v, 4);
    }
    struct Row {
      const char *engine;
      bool timing_only;
    };
    std::vector<Row> rows = {{"fsim", false}, {"perf", false}, {"perf", true}};
    if (with_rtl) rows.push_back({"rtl", false});
    run(pkg, config, "fsim", false, x);  // warm-up: page faults and caches, not timed
    std::vector<Measure> m;
    for (const Row &r : rows) {
      Measure best = run(pkg, config, r.engine, r.timing_only, x);
      for (int k = 1; k < repeat; ++k) {
        const Measure again = run(pkg, config, r.engine, r.timing_only, x);
        best.seconds = std::min(best.seconds, again.seconds);
      }
      m.push_back(best);
    }
    fmt::print("{} on config {}: the accelerator steps' wall time per engine\n", model,
               config.name);
    fmt::print("{:<22} {:>10} {:>12} {:>12}\n", "engine", "seconds", "cycles", "rtl / this");
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string name =
          std::string(rows[i].engine) + (rows[i].timing_only ? " --timing-only" : "");
      fmt::print("{:<22} {:>10.3f} {:>12} {:>12}\n", name, m[i].seconds,
                 m[i].cycles ? fmt::format("{}", m[i].cycles) : "-",
                 with_rtl ? fmt::format("{:.1f}x", m.back().seconds / m[i].seconds) : "-");
    }
    if (with_rtl && (m[1].cycles != m.back().cycles || m[2].cycles != m.back().cycles)) {
      fmt::print(stderr, "perf counted {} cycles, rtl {}\n", m[1].cycles, m.back().cycles);
      return 1;
    }
    return 0;
  } catch (const vacc::Error &e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
