// A miniature MobileNetV2 end to end (tests/e2e/data, made by tools/make_mini_mobilenet.py):
// every convolution, the depthwise (24 and 48 channels, stride 1 and 2) and grouped ones
// included, runs on the accelerator; every ReLU6 before the head is its producer's integer
// clip, so no float step lies between the first quantize and the last convolution; and the
// output equals, bit for bit on every engine, the int8 reference of the same quantized graph
// run entirely by the graph executor's own kernels (plain NCHW, the model's grouped weights).
#include <gtest/gtest.h>

#include <cstring>

#include "e2e_kit.h"
#include "program_kit.h"
#include "vacc/compile/compile_model.h"
#include "vacc/driver/device.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/host/reference_kernels.h"
#include "vacc/lower/graph_choices.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/runtime/graph_executor.h"
#include "vacc/support/npy.h"

namespace vacc {
namespace {

const std::string kData = std::string(VACC_SOURCE_DIR) + "/tests/e2e/data";
const std::string kModel = kData + "/mini_mobilenet.onnx";
const std::string kCalibration = kData + "/mini_mobilenet_calib.npy";

graph::Tensor input(int64_t i) {
  static const NpyArray all = read_npy(kData + "/mini_mobilenet_inputs.npy");
  return test::npy_row(all, i, {1, 3, 32, 32});
}

TEST(MiniMobileNetE2E, EveryConvolutionOnTheAcceleratorBitExactOnEveryEngine) {
  const isa::HwConfig config = test::config_named("default");
  compile::CompileOptions options;
  options.calibration = kCalibration;
  const isa::Package p = compile::compile_model(kModel, config, options).package;

  const graph::Graph model = graph::import_onnx(kModel);
  int model_convs = 0;
  for (const graph::Node *n : model.nodes()) model_convs += n->op == graph::OpKind::kConv;
  ASSERT_EQ(model_convs, 12);
  int accel_convs = 0, grouped = 0;
  for (const auto &s : p.steps) {
    if (s.op != "vacc.QConv") continue;
    EXPECT_EQ(s.target, isa::StepTarget::kAccel) << "a convolution left on the CPU";
    accel_convs += s.target == isa::StepTarget::kAccel;
    grouped += s.attrs.contains("group") && s.attrs["group"]["int"] != 1;
  }
  EXPECT_EQ(accel_convs, model_convs);
  // The 24- and 48-channel depthwise layers and the 16-channel groups run as slices of whole
  // blocks; the 16-channel depthwise layer and the groups of 3 channels fill one block (its
  // weight tile diagonal, block-diagonal) and run as one slice.
  EXPECT_EQ(grouped, 3);

  // From the first quantize to the last convolution every step is an integer one: each ReLU6
  // is its producer's clip. (The head after it, the last ReLU6 and the global average pooling,
  // stays float while pooling has no integer form.)
  size_t first = p.steps.size(), last = 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    if (p.steps[i].op == "QuantizeLinear") first = std::min(first, i);
    if (p.steps[i].op == "vacc.QConv") last = i;
  }
  ASSERT_LT(first, last);
  for (size_t i = first; i <= last; ++i)
    for (int32_t out : p.steps[i].outputs)
      EXPECT_NE(p.tensors[out].dtype, "f32") << "step " << i << " " << p.steps[i].op;

  std::vector<graph::Tensor> want;
  for (int64_t i = 0; i < 2; ++i)
    want.push_back(test::int8_reference(kModel, kCalibration, config, input(i)));
  for (const std::string &engine : test::test_engines()) {
    host::ReferenceKernels kernels(p);
    auto device = driver::open_device(engine, config);
    runtime::GraphExecutor exec(p, kernels, device.get(), config);
    for (int64_t i = 0; i < 2; ++i) {
      const auto got = exec.run({test::host(input(i))});
      ASSERT_EQ(got[0].data.size(), want[i].nbytes());
      EXPECT_EQ(std::memcmp(got[0].data.data(), want[i].raw(), want[i].nbytes()), 0)
          << engine << ", input " << i;
    }
  }
}

// Conv chains (graph/passes/chain_convs.h) on the same model: with extensions.store_inp each
// depthwise convolution whose result only its 1x1 projection reads runs with it as one
// vacc.QConvChain, the intermediate kept in INP (no tensor, no DRAM traffic for it), and the
// output stays the int8 reference's bit for bit: fsim and perf on default with the key, rtl on
// batch4 (which has it; its RTL model built on demand). Without the key, or with chains
// refused, no chain forms.
TEST(MiniMobileNetE2E, ConvChainsKeepIntermediatesOnChipBitExact) {
  auto chains_of = [](const isa::Package &p) {
    int n = 0;
    for (const auto &s : p.steps) {
      if (s.op != "vacc.QConvChain") continue;
      EXPECT_EQ(s.target, isa::StepTarget::kAccel);
      ++n;
    }
    return n;
  };
  compile::CompileOptions options;
  options.calibration = kCalibration;
  options.use_tuning_db = false;
  options.graph_choices.chain = lower::GraphChoice::kAlways;
  EXPECT_EQ(
      chains_of(compile::compile_model(kModel, test::config_named("default"), options).package), 0);
  isa::HwConfig with_key = test::config_named("default");
  with_key.store_inp = true;
  for (const auto &[config, engines] :
       {std::pair{with_key, std::vector<std::string>{"fsim", "perf"}},
        std::pair{test::config_named("batch4"), std::vector<std::string>{"rtl"}}}) {
    SCOPED_TRACE(config.name);
    compile::CompileOptions never = options;
    never.graph_choices.chain = lower::GraphChoice::kNever;
    const isa::Package apart = compile::compile_model(kModel, config, never).package;
    EXPECT_EQ(chains_of(apart), 0);
    const isa::Package p = compile::compile_model(kModel, config, options).package;
    const int chains = chains_of(p);
    EXPECT_GE(chains, 2);
    // Each chain replaced two steps and the tensor between them.
    EXPECT_EQ(p.steps.size() + chains, apart.steps.size());
    EXPECT_EQ(p.tensors.size() + chains, apart.tensors.size());
    for (const std::string &engine : engines) {
      host::ReferenceKernels kernels(p);
      auto device = driver::open_device(engine, config);
      runtime::GraphExecutor exec(p, kernels, device.get(), config);
      for (int64_t i = 0; i < 2; ++i) {
        const graph::Tensor want = test::int8_reference(kModel, kCalibration, config, input(i));
        const auto got = exec.run({test::host(input(i))});
        ASSERT_EQ(got[0].data.size(), want.nbytes());
        EXPECT_EQ(std::memcmp(got[0].data.data(), want.raw(), want.nbytes()), 0)
            << engine << ", input " << i;
      }
    }
  }
}

// The chains' choice follows tuned cycles where both forms have them (as `vacc tune` records
// them): with every chain measured faster than its pair every legal chain is made, with every
// chain slower none is, with the parts measured and no chain none is, and without tuned cycles
// the depthwise chains, which the cost model gives no figure, are not made.
TEST(MiniMobileNetE2E, ConvChainsFollowTunedCycles) {
  isa::HwConfig config = test::config_named("default");
  config.store_inp = true;
  auto chains_with = [&](std::optional<std::pair<uint64_t, uint64_t>> cycles,
                         lower::GraphChoice choice) {
    compile::CompileOptions o;
    o.calibration = kCalibration;
    o.use_tuning_db = false;
    o.graph_choices.chain = choice;
    if (cycles)
      o.tuned = [&config,
                 cycles](const lower::Layer &layer) -> std::optional<lower::TunedSchedule> {
        // Every layer tuned (compile_model compares whole programs by tuned cycles); the
        // other operators at 1 cycle.
        const bool chain = std::holds_alternative<lower::ConvChainParams>(layer.params);
        const bool conv = std::holds_alternative<lower::Conv2dParams>(layer.params);
        if (chain && cycles->first == 0) return std::nullopt;  // chains never measured
        return lower::TunedSchedule{lower::heuristic_schedule(config, layer, 2), "test",
                                    chain  ? cycles->first
                                    : conv ? cycles->second
                                           : 1};
      };
    int n = 0;
    for (const auto &s : compile::compile_model(kModel, config, o).package.steps)
      n += s.op == "vacc.QConvChain";
    return n;
  };
  const int legal = chains_with(std::nullopt, lower::GraphChoice::kAlways);
  ASSERT_GE(legal, 2);
  EXPECT_EQ(chains_with(std::pair<uint64_t, uint64_t>{10, 1000}, lower::GraphChoice::kDecide),
            legal);
  EXPECT_EQ(chains_with(std::pair<uint64_t, uint64_t>{100000, 10}, lower::GraphChoice::kDecide), 0);
  EXPECT_LT(chains_with(std::nullopt, lower::GraphChoice::kDecide), legal);
  // The parts measured but no chain: the measured form, apart (the model does not override
  // the tuner's measurements).
  EXPECT_EQ(chains_with(std::pair<uint64_t, uint64_t>{0, 10}, lower::GraphChoice::kDecide), 0);
}

}  // namespace
}  // namespace vacc
