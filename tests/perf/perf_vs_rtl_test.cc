// The timing model against the RTL, with the calibration targets of bench/RESULTS.md: random
// progen programs on both, total cycles within 5% on at least 95% of them, and ResNet-18 conv
// layers within 2%; both engines must leave the same device memory. Every program off by more
// is named with its seed and the first instruction whose start diverges. Configs: small, and
// b8x16_bus128 (tests/perf/configs, not bundled), whose RTL this test's build verilates.
// VACC_PERF_SEEDS / VACC_PERF_START / VACC_PERF_VERBOSE widen and show the sample.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "layer_bench.h"
#include "rtl_model.h"
#include "test_configs.h"
#include "vacc/driver/perf_device.h"
#include "vacc/driver/rtl_device.h"
#include "vacc/isa/config.h"
#include "vacc/progen/progen.h"
#include "vacc/simulator/perf_sim.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/simulator/timeline_compare.h"

namespace vacc::sim {

ModelEntry VACC_PERF_TEST_MODEL_ENTRY();  // b8x16_bus128's RTL (tests/perf/CMakeLists.txt)

namespace {

// The RTL options for `config`: by name for the model this test registers.
RtlOptions rtl_options(const isa::HwConfig &config) {
  static const bool registered = [] {
    add_model_entry(VACC_PERF_TEST_MODEL_ENTRY());
    return true;
  }();
  RtlOptions o;
  if (registered && !rtl_model_available(config) && config.name == "b8x16_bus128")
    o.model = config.name;
  return o;
}

bool has_model(const isa::HwConfig &config) {
  return rtl_model_available(config) || !rtl_options(config).model.empty();
}

std::string no_model(const std::string &name) {
  return "this binary has no RTL model for " + name +
         " (add it to VACC_RTL_CONFIGS, or let the rtl engine build it on demand)";
}

uint64_t env_or(const char *name, uint64_t fallback) {
  const char *v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

class PerfVsRtl : public ::testing::TestWithParam<std::string> {};

TEST_P(PerfVsRtl, RandomProgramsWithinFivePercent) {
  const isa::HwConfig config = config_named(GetParam());
  if (!has_model(config)) GTEST_SKIP() << no_model(GetParam());
  RtlOptions ro = rtl_options(config);
  ro.record_slices = true;
  ro.cycle_limit = 2'000'000;
  RtlSim rtl(config, ro);
  PerfOptions po;
  po.record_slices = true;
  PerfSim perf(config, po);
  const uint64_t seeds = env_or("VACC_PERF_SEEDS", 200), start = env_or("VACC_PERF_START", 0);
  const bool verbose = std::getenv("VACC_PERF_VERBOSE") != nullptr;
  uint64_t within = 0, exact = 0;
  double worst = 0;
  for (uint64_t seed = start; seed < start + seeds; ++seed) {
    const isa::Program p = progen::generate_program(config, seed);
    std::vector<uint8_t> a = p.dram, b = p.dram;
    rtl.run(a, p.insn_offset, p.insn_count);
    perf.run(b, p.insn_offset, p.insn_count);
    const double rc = static_cast<double>(rtl.counters().at("cycles"));
    const double pc = static_cast<double>(perf.counters().at("cycles"));
    const double err = (pc - rc) / rc;
    worst = std::max(worst, std::abs(err));
    within += std::abs(err) <= 0.05;
    exact += pc == rc;
    EXPECT_EQ(a, b) << "seed " << seed << ": perf's device memory differs from rtl's";
    if (verbose ? pc != rc : std::abs(err) > 0.05) {
      const auto d = first_divergence(rtl.slices(), perf.slices());
      fmt::print("seed {}: rtl {} perf {} ({:+.2f}%){}\n", seed, rc, pc, 100 * err,
                 d ? fmt::format("; first divergence: insn {} track {} rtl {} perf {}", d->index,
                                 d->track, d->reference_start,
                                 d->model_start ? fmt::format("{}", *d->model_start) : "-")
                   : "");
    }
  }
  fmt::print("{}: {} of {} programs within 5%, {} exact, worst {:.2f}%\n", GetParam(), within,
             seeds, exact, 100 * worst);
  EXPECT_GE(within, seeds * 95 / 100);
}

TEST_P(PerfVsRtl, ConvLayersWithinTwoPercent) {
  const isa::HwConfig config = config_named(GetParam());
  if (!has_model(config)) GTEST_SKIP() << no_model(GetParam());
  for (const bench::ConvLayerSpec &layer : bench::resnet18_convs()) {
    if (layer.name != "C8" && layer.name != "C11") continue;  // the two shortest
    driver::RtlDevice rtl(config, rtl_options(config));
    driver::PerfDevice perf(config, {});
    bench::LayerBenchOptions o;
    o.device = &rtl;
    const bench::LayerResult a = bench::run_conv_layer(config, layer, o);
    o.device = &perf;
    const bench::LayerResult b = bench::run_conv_layer(config, layer, o);
    EXPECT_EQ(a.mismatches, 0u);
    EXPECT_EQ(b.mismatches, 0u);
    const double rc = static_cast<double>(a.counters.at("cycles"));
    const double pc = static_cast<double>(b.counters.at("cycles"));
    fmt::print("{} {}: rtl {} perf {} ({:+.2f}%)\n", GetParam(), layer.name, rc, pc,
               100 * (pc - rc) / rc);
    EXPECT_LE(std::abs(pc - rc) / rc, 0.02) << layer.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, PerfVsRtl,
                         ::testing::Values("small", "configs/b8x16_bus128.yaml"),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return std::filesystem::path(info.param).stem().string();
                         });

}  // namespace
}  // namespace vacc::sim
