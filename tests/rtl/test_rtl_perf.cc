// Performance properties of the accelerator RTL, measured with its own counters: tokens let
// load, compute and store overlap (a double-buffered pipeline beats its serialized twin), and
// a GEMM stream on resident operands keeps the GEMM core busy (counter 0x48) >= 95% of the
// compute engine's busy window.
#include <gtest/gtest.h>

#include "vacc/isa/config.h"
#include "vacc/progen/workloads.h"
#include "vacc/simulator/cosim.h"
#include "vacc/simulator/rtl_sim.h"

namespace vacc::sim {
namespace {

isa::HwConfig config_named(const std::string &name) {
  return isa::load_config(isa::resolve_config_path(name));
}

TEST(RtlPerf, DoubleBufferedPipelineBeatsItsSerializedTwin) {
  const isa::HwConfig config = config_named("default");
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for default";
  RtlSim rtl(config);
  const CosimOutcome serial = cosim_program(
      config, rtl, progen::make_pipeline_program(config, 8, 8, false, 4), "serialized pipeline");
  ASSERT_TRUE(serial.ok) << serial.message;
  const CosimOutcome overlapped = cosim_program(
      config, rtl, progen::make_pipeline_program(config, 8, 8, true, 4), "double-buffered pipeline");
  ASSERT_TRUE(overlapped.ok) << overlapped.message;
  EXPECT_LT(static_cast<double>(overlapped.rtl_cycles), 0.8 * static_cast<double>(serial.rtl_cycles))
      << "double-buffered " << overlapped.rtl_cycles << " vs serialized " << serial.rtl_cycles;
}

TEST(RtlPerf, GemmStreamKeepsTheGemmCoreBusy) {
  const isa::HwConfig config = config_named("default");
  if (!rtl_model_available(config)) GTEST_SKIP() << "no RTL model built for default";
  RtlSim rtl(config);
  const CosimOutcome o =
      cosim_program(config, rtl, progen::make_gemm_stream(config, 64, 256), "gemm stream");
  ASSERT_TRUE(o.ok) << o.message;
  const auto c = rtl.counters();
  ASSERT_GT(c.at("compute_busy"), 0u);
  const double busy = static_cast<double>(c.at("gemm_busy")) / static_cast<double>(c.at("compute_busy"));
  EXPECT_GE(busy, 0.95) << "gemm_busy " << c.at("gemm_busy") << " compute_busy "
                        << c.at("compute_busy");
  // 64 GEMMs of 256 micro-op steps: the core cannot be busy for fewer cycles than that.
  EXPECT_GE(c.at("gemm_busy"), 64u * 256u);
}

}  // namespace
}  // namespace vacc::sim
