// An ISA extension's effect on one compiled convolution, for the extensions' compiler tests:
// compiled for a config without and one with it, both give the C++ reference's outputs on fsim
// and the one with it takes fewer perf cycles.
#pragma once

#include <gtest/gtest.h>

#include "layer_kit.h"
#include "reference.h"

namespace vacc::test {

inline void expect_same_outputs_fewer_cycles(const isa::HwConfig &without,
                                             const isa::HwConfig &with,
                                             const lower::Conv2dParams &p,
                                             const lower::LoweredLayer &a,
                                             const lower::LoweredLayer &b) {
  const auto args = random_layer_args(b.op, 40);
  const auto want = conv2d_reference(without, p, args[0], args[1], args[2]);
  EXPECT_EQ(run_layer("fsim", without, a, args).out, want);
  EXPECT_EQ(run_layer("fsim", with, b, args).out, want);
  EXPECT_LT(run_layer("perf", with, b, args).counters.at("cycles"),
            run_layer("perf", without, a, args).counters.at("cycles"));
}

}  // namespace vacc::test
