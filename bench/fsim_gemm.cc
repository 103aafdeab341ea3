// fsim's GEMM path: a long stream of GEMM micro-ops on resident operands, per config.
// Reports int8 MACs per second on one core (target: >= 1 G MAC/s for the default config).
#include <benchmark/benchmark.h>

#include <random>

#include "vacc/isa/program.h"
#include "vacc/simulator/fsim.h"

namespace {

using namespace vacc;

isa::Program gemm_program(const isa::HwConfig &c) {
  isa::ProgramBuilder b(c);
  const uint32_t kt = 16, tiles_in = 256, tiles_w = 16;
  const uint32_t a = b.add_region("a", isa::RegionKind::kInput, isa::MemId::kInp, tiles_in);
  const uint32_t w = b.add_region("w", isa::RegionKind::kWeight, isa::MemId::kWgt, tiles_w);
  std::mt19937 rng(1);
  for (const char *name : {"a", "w"}) {
    auto bytes = b.region_bytes(name);
    for (auto &v : bytes) v = static_cast<uint8_t>(rng());
    b.set_region_bytes(name, bytes);
  }
  const uint32_t uops = b.uop_region_base();
  for (uint32_t k = 0; k < kt; ++k) b.add_uop({0, k, k});
  isa::MemInsn load;
  load.mem = isa::MemId::kInp, load.dram_base = a, load.y_size = 1, load.x_size = tiles_in;
  load.x_stride = tiles_in;
  b.emit(load);
  load.mem = isa::MemId::kWgt, load.dram_base = w, load.x_size = load.x_stride = tiles_w;
  load.deps.push_next = true;
  b.emit(load);
  isa::MemInsn uop_load;
  uop_load.mem = isa::MemId::kUop, uop_load.dram_base = uops, uop_load.y_size = 1;
  uop_load.x_size = uop_load.x_stride = kt;
  uop_load.deps.pop_prev = true;
  b.emit(uop_load);
  // 16 output rows x 16 column tiles x 16 reduction micro-ops, repeated.
  isa::GemmInsn g;
  g.uop_begin = 0, g.uop_end = kt, g.loop_out = 16, g.loop_in = 16;
  g.acc = {16, 1}, g.inp = {kt, 0}, g.wgt = {0, 0};
  for (int r = 0; r < 64; ++r) b.emit(g);
  b.emit(isa::FinishInsn{});
  return b.finish();
}

void BM_FsimGemm(benchmark::State &state, const char *config_name) {
  const isa::HwConfig c =
      isa::load_config(std::string(VACC_BENCH_CONFIG_DIR) + "/" + config_name + ".yaml");
  const isa::Program p = gemm_program(c);
  sim::Fsim fsim(c);
  std::vector<uint8_t> dram = p.dram;
  uint64_t macs = 0;
  for (auto _ : state) {
    fsim.run(dram, p.insn_offset, p.insn_count);
    macs += fsim.stats().macs;
  }
  state.counters["MAC/s"] = benchmark::Counter(double(macs), benchmark::Counter::kIsRate);
  state.counters["uops/s"] =
      benchmark::Counter(double(fsim.stats().gemm_uops) * state.iterations(),
                         benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_FsimGemm, default, "default")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FsimGemm, small, "small")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FsimGemm, wide, "wide")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
