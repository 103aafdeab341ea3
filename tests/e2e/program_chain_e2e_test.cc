// Whole models with their consecutive accelerator steps run as one device program (the
// default; lower/join_programs.h) against the same models compiled with a program per layer:
// outputs equal bit for bit on fsim and perf on several configs (a residual network with a
// fused stem and add, a depthwise MobileNet chain, a residual CNN), never more cycles, each
// step's share of a program's cycles adding up to the program's count, and on rtl the merged
// programs give the same outputs and exactly perf's cycles.
#include <gtest/gtest.h>

#include <cstring>

#include "e2e_kit.h"
#include "program_kit.h"
#include "vacc/compile/compile_model.h"
#include "vacc/driver/device.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/npy.h"

namespace vacc {
namespace {

const std::string kData = std::string(VACC_SOURCE_DIR) + "/tests/e2e/data";

struct Model {
  std::string name;  // <name>.onnx
  std::string data;  // <data>_calib.npy, <data>_inputs.npy
  graph::Shape input;
};

const std::vector<Model> &models() {
  static const std::vector<Model> m = {{"mini_resnet", "mini_resnet", {1, 3, 32, 32}},
                                       {"mini_mobilenet", "mini_mobilenet", {1, 3, 32, 32}},
                                       {"residual_cnn", "residual", {1, 16, 8, 8}}};
  return m;
}

isa::Package compile(const Model &m, const isa::HwConfig &config, bool per_layer) {
  compile::CompileOptions o;
  o.calibration = kData + "/" + m.data + "_calib.npy";
  o.use_tuning_db = false;
  o.program_per_layer = per_layer;
  return compile::compile_model(kData + "/" + m.name + ".onnx", config, o).package;
}

runtime::HostTensor input(const Model &m) {
  const NpyArray all = read_npy(kData + "/" + m.data + "_inputs.npy");
  return test::host(test::npy_row(all, 0, m.input));
}

struct ModelRun {
  std::vector<uint8_t> output;
  runtime::RunProfile profile;
};

ModelRun run(const isa::Package &p, const isa::HwConfig &config, const std::string &engine,
             const runtime::HostTensor &x) {
  host::ReferenceKernels kernels(p);
  auto device = driver::open_device(engine, config);
  runtime::GraphExecutor exec(p, kernels, device.get(), config);
  ModelRun r;
  r.output = exec.run({x}, &r.profile)[0].data;
  return r;
}

int joined(const isa::Package &p) {
  int n = 0;
  for (const auto &s : p.steps) n += s.joins_previous;
  return n;
}

TEST(ProgramChainE2E, MergedProgramsMatchAProgramPerLayer) {
  for (const std::string config_name : {"default", "small", "wide"}) {
    const isa::HwConfig config = test::config_named(config_name);
    for (const Model &m : models()) {
      SCOPED_TRACE(m.name + " on " + config_name);
      const isa::Package merged = compile(m, config, false);
      const isa::Package apart = compile(m, config, true);
      EXPECT_GT(joined(merged), 0) << "no accelerator step joined the one before";
      EXPECT_EQ(joined(apart), 0);
      const runtime::HostTensor x = input(m);
      EXPECT_EQ(run(merged, config, "fsim", x).output, run(apart, config, "fsim", x).output);
      const ModelRun a = run(apart, config, "perf", x);
      const ModelRun b = run(merged, config, "perf", x);
      EXPECT_EQ(b.output, a.output);
      ASSERT_TRUE(a.profile.cycles() && b.profile.cycles());
      EXPECT_LE(*b.profile.cycles(), *a.profile.cycles());
      EXPECT_EQ(b.profile.transitions(), a.profile.transitions());
      // Each program's steps share its cycles out: they add up to its counter.
      for (size_t i = 0; i < b.profile.steps.size(); ++i) {
        const runtime::StepProfile &s = b.profile.steps[i];
        if (s.where != isa::StepTarget::kAccel || s.program != s.index) continue;
        uint64_t shares = 0;
        for (size_t k = i; k < b.profile.steps.size() && b.profile.steps[k].program == s.index &&
                           b.profile.steps[k].where == isa::StepTarget::kAccel;
             ++k) {
          ASSERT_TRUE(b.profile.steps[k].cycles) << b.profile.steps[k].name;
          shares += *b.profile.steps[k].cycles;
          if (k > i) EXPECT_TRUE(b.profile.steps[k].overlap_cycles.has_value());
          // Each step's executed MACs as the device counts them, step by step.
          EXPECT_EQ(b.profile.steps[k].executed_macs, a.profile.steps[k].executed_macs)
              << b.profile.steps[k].name;
        }
        EXPECT_EQ(shares, s.counters.at("cycles")) << s.name;
      }
    }
  }
}

TEST(ProgramChainE2E, RtlRunsMergedProgramsAsPerfTimesThem) {
  const isa::HwConfig config = test::config_named("default");
  const Model &m = models()[0];
  const isa::Package merged = compile(m, config, false);
  const runtime::HostTensor x = input(m);
  const ModelRun on_rtl = run(merged, config, "rtl", x);
  const ModelRun on_perf = run(merged, config, "perf", x);
  const ModelRun apart = run(compile(m, config, true), config, "fsim", x);
  EXPECT_EQ(on_rtl.output, apart.output);
  ASSERT_TRUE(on_rtl.profile.cycles() && on_perf.profile.cycles());
  EXPECT_EQ(*on_perf.profile.cycles(), *on_rtl.profile.cycles());
  for (size_t i = 0; i < on_rtl.profile.steps.size(); ++i)
    EXPECT_EQ(on_rtl.profile.steps[i].cycles, on_perf.profile.steps[i].cycles)
        << on_rtl.profile.steps[i].name;
}

// The listings (vacc compile --dump-ir DIR/programs) are the streams a run submits: one per
// program, each step's first instruction marked, as many instructions as the device was given.
TEST(ProgramChainE2E, ListingsAreTheProgramsARunSubmits) {
  const isa::HwConfig config = test::config_named("default");
  const Model &m = models()[0];
  const isa::Package merged = compile(m, config, false);
  host::ReferenceKernels kernels(merged);
  auto device = driver::open_device("fsim", config);
  runtime::GraphExecutor exec(merged, kernels, device.get(), config);
  const std::vector<runtime::ProgramListing> listings = exec.program_listings();
  runtime::RunProfile profile;
  exec.run({input(m)}, &profile);
  ASSERT_EQ(static_cast<int>(listings.size()), profile.programs());
  for (const runtime::StepProfile &s : profile.steps) {
    if (s.where != isa::StepTarget::kAccel) continue;
    const runtime::ProgramListing *l = nullptr;
    for (const auto &x : listings)
      if (x.first <= s.index && s.index <= x.last) l = &x;
    ASSERT_NE(l, nullptr) << s.name;
    EXPECT_EQ(l->first, s.program) << s.name;
    EXPECT_NE(l->text.find("# step " + std::to_string(s.index) + " '" + s.name + "'"),
              std::string::npos)
        << s.name;
    if (s.program == s.index) {
      EXPECT_EQ(l->instructions, s.counters.at("runtime_insns")) << s.name;
      EXPECT_NE(l->text.find("finish"), std::string::npos);
    }
  }
}

// With a per-step observer (vacc run --check) every step runs alone, so that each sees its own
// outputs; the outputs stay those of the merged run.
TEST(ProgramChainE2E, ObserverSeesEveryStep) {
  const isa::HwConfig config = test::config_named("default");
  const Model &m = models()[1];
  const isa::Package merged = compile(m, config, false);
  const runtime::HostTensor x = input(m);
  host::ReferenceKernels kernels(merged);
  auto device = driver::open_device("fsim", config);
  runtime::GraphExecutor exec(merged, kernels, device.get(), config);
  size_t seen = 0;
  const auto out =
      exec.run({x}, nullptr, [&](size_t, const std::vector<const uint8_t *> &) { ++seen; });
  EXPECT_EQ(seen, merged.steps.size());
  EXPECT_EQ(out[0].data, run(merged, config, "fsim", x).output);
}

}  // namespace
}  // namespace vacc
