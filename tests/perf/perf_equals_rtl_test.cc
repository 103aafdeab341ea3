// perf == rtl, as a property: configs drawn at random over every key the timing depends on
// (array shape, batch, accumulator width, scratchpad sizes, bus, latency, bytes per cycle,
// queue depths, DSP packing, the ALU's CLIP and HOLD, the GEMM's assign and STORE INP) and
// random progen programs on each;
// perf's cycles and every counter both engines report must equal rtl's exactly. rtl's device
// memory must equal fsim's and perf's rtl's (perf computes its data with fsim, so only rtl is
// independent of it). Each config's RTL model is built on demand into the build tree's model
// cache (minutes, once per config and RTL hash). VACC_PROPERTY_CONFIGS / VACC_PROPERTY_SEEDS /
// VACC_PROPERTY_FIRST widen the sample (`make soak`); `make test` runs a small one.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/progen/progen.h"
#include "vacc/simulator/fsim.h"
#include "vacc/simulator/perf_sim.h"
#include "vacc/simulator/rtl_sim.h"
#include "vacc/support/error.h"

namespace vacc::sim {
namespace {

uint64_t env_or(const char *name, uint64_t fallback) {
  const char *v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

// A valid config drawn from `seed`: draws that break a rule (a buffer below one tile, packing
// without a pair) are drawn again, as are cores of more than 256 MACs. Small scratchpads keep the
// models quick to build.
isa::HwConfig draw_config(uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 1);
  auto pick = [&](std::vector<int> v) { return v[rng() % v.size()]; };
  for (int attempt = 0;; ++attempt) {
    const int bus = pick({32, 64, 128, 256});
    const bool clip = seed % 2 == 1;  // every other config: make test's two have one each
    const bool hold = seed % 4 < 2;   // half the configs, make test's two both
    const bool assign = seed % 4 == 0 || seed % 4 == 3;  // half, make test's first
    const bool store_inp = seed % 2 == 0;  // half, make test's first: a square core then
    const int block_in = pick({4, 8, 16});
    const int block_out = store_inp ? block_in : pick({1, 4, 8, 16});
    const std::string yaml = fmt::format(
        "name: prop{}\n"
        "gemm: {{batch: {}, block_in: {}, block_out: {}, dsp_packing: {}}}\n"
        "dtype: {{acc_bits: {}}}\n"
        "buffers: {{uop_kib: {}, inp_kib: {}, wgt_kib: {}, acc_kib: {}}}\n"
        "memory: {{bus_bits: {}, latency_cycles: {}, bytes_per_cycle: {}}}\n"
        "queues: {{insn_depth: {}, token_depth: {}}}\n"
        "extensions: {{alu_clip: {}, alu_hold: {}, gemm_assign: {}, store_inp: {}}}\n",
        seed, pick({1, 2, 4}), block_in, block_out, pick({0, 1}) ? "on" : "off", pick({16, 32}),
        pick({1, 2, 4}), pick({1, 2, 4}), pick({2, 4, 8}), pick({2, 4, 8, 16}), bus,
        pick({1, 7, 32, 64, 100}), std::min(bus / 8, pick({1, 2, 4, 8, 16, 32})),
        pick({2, 4, 8, 16}), pick({2, 8, 32, 64}), clip ? "on" : "off", hold ? "on" : "off",
        assign ? "on" : "off", store_inp ? "on" : "off");
    try {
      const isa::HwConfig c = isa::parse_config(yaml, fmt::format("drawn config {}", seed));
      // At most 256 MACs: the model of each config is built (minutes on 2 cores for more).
      if (c.batch * c.block_in * c.block_out <= 256) return c;
    } catch (const Error &) {
      // A draw that breaks a rule: draw again.
    }
    VACC_CHECK(attempt < 1000) << "no valid config drawn from seed " << seed;
  }
}

std::string describe(const isa::HwConfig &c) {
  return fmt::format(
      "{}x{}x{} acc{} packing {} uop/inp/wgt/acc {}/{}/{}/{} KiB bus {} latency {} {} B/cycle "
      "queues {}/{} clip {} hold {} assign {} store_inp {}",
      c.batch, c.block_in, c.block_out, c.acc_bits, isa::dsp_packing_name(c.dsp_packing), c.uop_kib,
      c.inp_kib, c.wgt_kib, c.acc_kib, c.bus_bits, c.mem_latency_cycles, c.mem_bytes_per_cycle,
      c.insn_queue_depth, c.token_queue_depth, c.alu_clip ? "on" : "off", c.alu_hold ? "on" : "off",
      c.gemm_assign ? "on" : "off", c.store_inp ? "on" : "off");
}

TEST(PerfEqualsRtl, RandomConfigsAndProgramsCountTheSameCycles) {
  const uint64_t configs = env_or("VACC_PROPERTY_CONFIGS", 2);
  const uint64_t seeds = env_or("VACC_PROPERTY_SEEDS", 200);
  const uint64_t first = env_or("VACC_PROPERTY_FIRST", 0);
  uint64_t programs = 0, mismatches = 0;
  for (uint64_t k = first; k < first + configs; ++k) {
    const isa::HwConfig config = draw_config(k);
    SCOPED_TRACE(fmt::format("config {}: {}", k, describe(config)));
    fmt::print("config {}: {}\n", k, describe(config));
    RtlOptions ro;
    ro.cache_dir = VACC_PERF_TEST_MODEL_CACHE;
    ro.cycle_limit = 2'000'000;
    RtlSim rtl(config, ro);
    PerfSim perf(config);
    for (uint64_t seed = 0; seed < seeds; ++seed) {
      const isa::Program p = progen::generate_program(config, seed);
      std::vector<uint8_t> expect = p.dram, a = p.dram, b = p.dram;
      Fsim(config).run(expect, p.insn_offset, p.insn_count);
      rtl.run(a, p.insn_offset, p.insn_count);
      perf.run(b, p.insn_offset, p.insn_count);
      ++programs;
      const auto rc = rtl.counters(), pc = perf.counters();
      std::string what;
      if (a != expect)
        what = "rtl's device memory differs from fsim's";
      else if (b != a)
        what = "perf's device memory differs from rtl's";
      for (const auto &[key, value] : rc) {
        if (!what.empty()) break;
        if (key.rfind("sim_", 0) == 0) continue;  // the simulators' own speed
        auto it = pc.find(key);
        if (it == pc.end())
          what = fmt::format("perf has no counter '{}'", key);
        else if (it->second != value)
          what = fmt::format("{}: rtl {} perf {}", key, value, it->second);
      }
      if (!what.empty()) {
        ++mismatches;
        ADD_FAILURE() << "seed " << seed << " (" << progen::describe_program(config, seed)
                      << "): " << what;
      }
    }
  }
  fmt::print("perf == rtl: {} configs (from {}), {} programs, {} mismatches\n", configs, first,
             programs, mismatches);
}

}  // namespace
}  // namespace vacc::sim
