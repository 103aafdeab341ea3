// A lowered layer held to a reference output: the loop-IR interpreter on its final IR, then a
// run on every test engine, each compared value by value (shared by the operator tests). With
// `perf_within` > 0 the timing model runs too: the same outputs, and its cycles within that
// fraction of the RTL's (the calibration bound of bench/RESULTS.md: 2 % for layers).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "layer_kit.h"
#include "program_kit.h"

namespace vacc::test {

inline void check_layer(const isa::HwConfig &c, const lower::LoweredLayer &layer,
                        const std::vector<std::vector<int64_t>> &args,
                        const std::vector<int64_t> &want, double perf_within = 0) {
  int64_t macs = 0;
  ASSERT_EQ(interpret_layer(c, layer, args, &macs), want) << "interpreter vs reference";
  std::vector<std::string> engines = test_engines();
  if (perf_within > 0) engines.push_back("perf");
  std::optional<uint64_t> rtl_cycles;
  for (const std::string &engine : engines) {
    SCOPED_TRACE("engine " + engine);
    LayerRun run = run_layer(engine, c, layer, args);
    size_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i) bad += run.out[i] != want[i];
    EXPECT_EQ(bad, 0u) << bad << " of " << want.size() << " outputs differ";
    if (engine == "rtl") rtl_cycles = run.counters.at("cycles");
    if (engine == "perf" && rtl_cycles) {
      const uint64_t cycles = run.counters.at("cycles");
      const double rc = static_cast<double>(*rtl_cycles), pc = static_cast<double>(cycles);
      EXPECT_LE(std::abs(pc - rc) / rc, perf_within)
          << "perf " << cycles << " cycles, rtl " << *rtl_cycles;
    }
  }
}

}  // namespace vacc::test
