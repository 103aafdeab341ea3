// The timing model against the RTL, with the calibration targets of bench/RESULTS.md: random
// progen programs on both, total cycles within 5% on at least 95% of them, and ResNet-18 conv
// layers within 2%; both engines must leave the same device memory. Every program off by more
// is named with its seed and the first instruction whose start diverges. Configs: small, and
// b8x16_bus128 (tests/perf/configs, not bundled), whose RTL model the rtl engine builds on
// demand.
// VACC_PERF_SEEDS / VACC_PERF_START / VACC_PERF_VERBOSE widen and show the sample.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "layer_bench.h"
#include "test_configs.h"
#include "vacc/driver/perf_device.h"
#include "vacc/driver/rtl_device.h"
#include "vacc/isa/config.h"
#include "vacc/progen/progen.h"
#include "vacc/simulator/perf_sim.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/simulator/timeline_compare.h"

namespace vacc::sim {

namespace {

// The RTL options: a model the binary lacks is built on demand into the test's
// cache (tests/perf/CMakeLists.txt).
RtlOptions rtl_options() {
  RtlOptions o;
  o.cache_dir = VACC_PERF_TEST_MODEL_CACHE;
  return o;
}

uint64_t env_or(const char *name, uint64_t fallback) {
  const char *v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

class PerfVsRtl : public ::testing::TestWithParam<std::string> {};

TEST_P(PerfVsRtl, RandomProgramsWithinFivePercent) {
  const isa::HwConfig config = config_named(GetParam());
  RtlOptions ro = rtl_options();
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
  for (const bench::ConvLayerSpec &layer : bench::resnet18_convs()) {
    if (layer.name != "C8" && layer.name != "C11") continue;  // the two shortest
    driver::RtlDevice rtl(config, rtl_options());
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
