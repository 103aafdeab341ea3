// The ResNet-18 layer benchmark's correctness on the small config: every layer C1-C12 (C1
// folded im2col-style) compiled with its default schedule with 2 virtual threads (C1 and C9
// also with 1), run on each test engine, must match the C++ reference bit for bit.
#include <gtest/gtest.h>

#include "layer_bench.h"
#include "program_kit.h"
#include "vacc/support/error.h"

namespace vacc {
namespace {

TEST(BenchResnet18Convs, EmbeddedTableHasTwelveLayers) {
  auto layers = bench::resnet18_convs();
  ASSERT_EQ(layers.size(), 12u);
  EXPECT_EQ(layers[0].name, "C1");
  EXPECT_EQ(layers[0].ic, 3);
  EXPECT_EQ(layers[0].k, 7);
  EXPECT_EQ(layers[11].name, "C12");
  EXPECT_EQ(layers[11].ic, 512);
}

TEST(BenchResnet18Convs, SmallConfigAllLayersMatchReference) {
  isa::HwConfig c = test::config_named("small");
  for (const std::string &engine : test::test_engines()) {
    for (int vt : {1, 2}) {
      for (const auto &l : bench::resnet18_convs()) {
        // One virtual thread on a folded and a plain layer only, to keep the test short.
        if (vt == 1 && l.name != "C1" && l.name != "C9") continue;
        bench::LayerBenchOptions o;
        o.engine = engine;
        o.vthreads = vt;
        bench::LayerResult r = bench::run_conv_layer(c, l, o);
        EXPECT_EQ(r.mismatches, 0u) << engine << " vthreads=" << vt << " layer " << l.name;
        EXPECT_GT(r.outputs, 0u);
        EXPECT_EQ(r.folded, l.name == "C1");
        EXPECT_GE(r.executed_macs, r.macs) << l.name;
      }
    }
  }
}

TEST(BenchResnet18Convs, LayerTableErrorsNameTheLayer) {
  try {
    bench::parse_conv_layers("layers:\n  - {name: X, h: 4, w: 4, ic: 16, oc: 16, k: 3}\n", "t.yaml");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("t.yaml: layer X has no `stride`"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace vacc
