// Lowering time of a ResNet-18 layer (conv 3x3, 56x56, 64 -> 64 channels, stride 1, pad 1,
// with bias, ReLU and requantization) for the accelerator: compute definition + schedule
// + lowering to loop IR, then every pass of the pipeline, with 1 and 2 virtual threads.
#include <benchmark/benchmark.h>

#include <string>

#include "vacc/lower/operators.h"
#include "vacc/lower/lower.h"

namespace {

vacc::isa::HwConfig config() {
  return vacc::isa::load_config(std::string(VACC_BENCH_CONFIG_DIR) + "/default.yaml");
}

vacc::lower::Conv2dParams resnet18_layer() {
  vacc::lower::Conv2dParams p;
  p.in_channels = p.out_channels = 64;
  p.height = p.width = 56;
  p.kernel_h = p.kernel_w = 3;
  p.pad_h = p.pad_w = 1;
  return p;
}

void BM_LowerResNet18Conv(benchmark::State &state) {
  vacc::isa::HwConfig c = config();
  vacc::lower::AccelSchedule s;
  s.tile_h = s.tile_w = 14;
  s.tile_oc = 2;
  s.tile_ic = 1;
  s.vthreads = static_cast<int>(state.range(0));
  if (s.vthreads == 2) s.tile_oc = 1;
  vacc::lower::LowerOptions o;
  o.verify = false;
  for (auto _ : state) {
    vacc::lower::Operator op = vacc::lower::define(c, resnet18_layer(), s);
    vacc::tir::Func f = vacc::lower::lower_loops(op.func, c, o);
    benchmark::DoNotOptimize(f.body.get());
  }
}
BENCHMARK(BM_LowerResNet18Conv)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
