// The RTL against fsim, byte for byte: random progen programs (500 per config) and the
// fixed performance workloads. A mismatch names the seed, the first differing address and the
// command that reproduces it. Configs without a built RTL model are skipped with a reason.
#include <gtest/gtest.h>

#include "vacc/isa/config.h"
#include "vacc/progen/progen.h"
#include "vacc/progen/workloads.h"
#include "vacc/simulator/cosim.h"
#include "vacc/simulator/rtl_sim.h"

namespace vacc::sim {
namespace {

constexpr uint64_t kSeeds = 500;

isa::HwConfig config_named(const std::string &name) {
  return isa::load_config(isa::resolve_config_path(name));
}

class Cosim : public ::testing::TestWithParam<std::string> {};

TEST_P(Cosim, RandomProgramsMatchFsim) {
  const isa::HwConfig config = config_named(GetParam());
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for " << GetParam();
  RtlOptions options;
  options.cycle_limit = 2'000'000;
  auto rtl = std::make_unique<RtlSim>(config, options);
  int failures = 0;
  for (uint64_t seed = 0; seed < kSeeds && failures < 5; ++seed) {
    const CosimOutcome o = cosim_seed(config, *rtl, seed);
    if (!o.ok) {
      ADD_FAILURE() << o.message;
      ++failures;
      rtl = std::make_unique<RtlSim>(config, options);  // a fresh board after an error
    }
  }
}

TEST_P(Cosim, PipelineWorkloadsMatchFsim) {
  const isa::HwConfig config = config_named(GetParam());
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for " << GetParam();
  RtlSim rtl(config);
  for (bool db : {false, true}) {
    const CosimOutcome o =
        cosim_program(config, rtl, progen::make_pipeline_program(config, 3, 4, db),
                      db ? "double-buffered pipeline" : "serial pipeline");
    EXPECT_TRUE(o.ok) << o.message;
  }
  const CosimOutcome o =
      cosim_program(config, rtl, progen::make_gemm_stream(config, 4, 64), "gemm stream");
  EXPECT_TRUE(o.ok) << o.message;
}

INSTANTIATE_TEST_SUITE_P(Configs, Cosim, ::testing::Values("default", "small", "wide"));

}  // namespace
}  // namespace vacc::sim
