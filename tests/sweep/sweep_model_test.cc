// The pure parts of vacc sweep against independent references: spec ranges and the point
// product against hand-written expectations, invalid points against the config reader's own
// rule, Pareto fronts against a brute-force check, block-RAM tiling against Yosys' count for
// the small config (hw/README.md), energy against a hand computation, CSV quoting.
#include <gtest/gtest.h>

#include <random>

#include "vacc/support/error.h"
#include "vacc/sweep/area.h"
#include "vacc/sweep/coefficients.h"
#include "vacc/sweep/energy.h"
#include "vacc/sweep/export.h"
#include "vacc/sweep/pareto.h"
#include "vacc/sweep/evaluate.h"
#include "vacc/sweep/points.h"
#include "vacc/sweep/report.h"
#include "vacc/sweep/resources.h"
#include "vacc/sweep/spec.h"

namespace vacc::sweep {
namespace {

TEST(SweepSpec, ListsAndRanges) {
  const SweepSpec s = parse_spec(R"(
name: t
base: small
axes:
  gemm.block_in: [8, 16]
  buffers.wgt_kib: {from: 8, to: 64, step: x2}
  clock_mhz: {from: 100, to: 150, step: 25}
  memory.latency_cycles: {from: 10, to: 35, step: 10}
  fpga.part: [xc7z020, xcu250]
workloads:
  - bench: resnet18-convs
    layers: [C2]
)",
                                 "t.yaml");
  ASSERT_EQ(s.axes.size(), 5u);
  EXPECT_EQ(s.axes[0].values, (std::vector<std::string>{"8", "16"}));
  EXPECT_EQ(s.axes[1].values, (std::vector<std::string>{"8", "16", "32", "64"}));
  EXPECT_EQ(s.axes[2].values, (std::vector<std::string>{"100", "125", "150"}));
  EXPECT_EQ(s.axes[3].values, (std::vector<std::string>{"10", "20", "30"}));  // 35 not reached
  EXPECT_EQ(s.axes[4].values, (std::vector<std::string>{"xc7z020", "xcu250"}));
  EXPECT_EQ(s.num_points(), 2 * 4 * 3 * 3 * 2);
  EXPECT_EQ(s.workloads[0].layers, (std::vector<std::string>{"C2"}));
}

// `tune:` reaches every workload, tails (on/off, true/false) and the work item's JSON, which
// names tune_tails only when on (the keys of specs without it are unchanged, so they resume).
TEST(SweepSpec, TuneTailsReachTheWorkItems) {
  for (const std::string word : {"on", "true", "off", "false"}) {
    const SweepSpec s = parse_spec(
        "tune: {trials: 4, tails: " + word + "}\nworkloads:\n  - bench: resnet18-convs\n",
        "t.yaml");
    const bool on = word == "on" || word == "true";
    EXPECT_EQ(s.workloads[0].tune_tails, on) << word;
    const nlohmann::json j = to_json(s.workloads[0]);
    EXPECT_EQ(j.contains("tune_tails"), on) << word;
    EXPECT_EQ(workload_from_json(j).tune_tails, on) << word;
  }
}

TEST(SweepSpec, FractionalStepsReachTheEnd) {
  const SweepSpec s = parse_spec(
      "axes:\n  clock_mhz: {from: 0.1, to: 0.5, step: 0.1}\nworkloads:\n  - bench: "
      "resnet18-convs\n",
      "f.yaml");
  ASSERT_EQ(s.axes[0].values.size(), 5u);
  EXPECT_EQ(s.axes[0].values.back(), "0.5");
}

TEST(SweepPoints, ProductOrderValuesAndInvalidReasons) {
  const SweepSpec s = parse_spec(R"(
name: p
axes:
  memory.bus_bits: [64, 128]
  memory.bytes_per_cycle: [8, 16]
workloads:
  - bench: resnet18-convs
)",
                                 "p.yaml");
  const std::string base =
      "gemm: {block_in: 8, block_out: 8}\nbuffers: {uop_kib: 4, inp_kib: 4, "
      "wgt_kib: 8, acc_kib: 8}\n";
  const auto points = expand_points(s, base);
  ASSERT_EQ(points.size(), 4u);
  // The last axis varies fastest.
  EXPECT_EQ(points[1].label(), "memory.bus_bits=64 memory.bytes_per_cycle=16");
  EXPECT_EQ(points[2].label(), "memory.bus_bits=128 memory.bytes_per_cycle=8");
  ASSERT_TRUE(points[3].config);
  EXPECT_EQ(points[3].config->bus_bits, 128);
  EXPECT_EQ(points[3].config->mem_bytes_per_cycle, 16);
  EXPECT_EQ(points[3].config->block_in, 8);  // from the base
  EXPECT_EQ(points[3].config->name, "p-p3");
  // 16 bytes per cycle do not fit a 64-bit bus: the config reader's own rule and key.
  ASSERT_FALSE(points[1].config);
  EXPECT_NE(points[1].invalid_reason.find("memory.bytes_per_cycle"), std::string::npos)
      << points[1].invalid_reason;
  std::string rule;
  try {
    isa::parse_config(points[1].config_yaml, "x");
  } catch (const Error &e) {
    rule = e.what();
  }
  EXPECT_NE(rule.find(points[1].invalid_reason), std::string::npos);
  for (size_t i : {0, 2, 3}) EXPECT_TRUE(points[i].config) << points[i].invalid_reason;
}

TEST(Pareto, MatchesBruteForce) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> d(0, 30);  // small range: many ties
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::pair<double, double>> c(40);
    for (auto &p : c) p = {d(rng), d(rng)};
    const auto front = pareto_front(c);
    for (size_t i = 0; i < c.size(); ++i) {
      bool dominated = false;
      for (size_t j = 0; j < c.size(); ++j)
        dominated =
            dominated || (c[j].first <= c[i].first && c[j].second <= c[i].second && c[j] != c[i]);
      EXPECT_EQ(front[i], !dominated) << "trial " << trial << " point " << i;
    }
  }
}

TEST(Resources, BramTilingMatchesYosysOnTheSmallConfig) {
  // hw/README.md: Yosys maps the small config's memories to 19 RAMB36 + 15 RAMB18.
  isa::HwConfig c;
  c.block_in = c.block_out = 8;
  c.uop_kib = 4;
  c.inp_kib = 4;
  c.wgt_kib = 8;
  c.acc_kib = 8;
  int64_t r36 = 0, r18 = 0;
  for (const RtlMemory &m : rtl_memories(c)) {
    const BramTiles t = bram_tiles(m.width, m.depth);
    r36 += m.copies * t.ramb36;
    r18 += m.copies * t.ramb18;
  }
  EXPECT_EQ(r36, 19);
  EXPECT_EQ(r18, 15);
  EXPECT_EQ(bram_tiles(72, 512).ramb36, 1);
  EXPECT_EQ(bram_tiles(36, 512).ramb18, 1);
  EXPECT_EQ(bram_tiles(1, 32768).ramb36, 1);
}

CoefficientTable energy_table() {
  return parse_coefficients(R"(
coefficients:
  mac_acc32_pj: {value: 0.3, source: s}
  mac_acc16_pj: {value: 0.25, source: s}
  alu_acc32_op_pj: {value: 0.1, source: s}
  alu_acc16_op_pj: {value: 0.05, source: s}
  dram_pj_per_byte: {value: 100, source: s}
  leakage_mw_per_mm2: {value: 10, source: s}
curves:
  sram_pj_per_byte_by_kib: {points: [[8, 1], [32, 2]], source: s}
)",
                            "e.yaml", energy_coefficient_names(), energy_curve_names());
}

TEST(Energy, FromCountersByHand) {
  isa::HwConfig c;  // 1x16x16, acc 32: tiles inp 16 B, wgt 256 B, acc 64 B; uop 4 B
  c.inp_kib = 8;
  c.wgt_kib = 32;
  c.acc_kib = 64;  // banks of 32 KiB
  c.uop_kib = 8;
  c.clock_mhz = 100;
  const std::map<std::string, uint64_t> counters = {
      {"macs", 256 * 10},        {"gemm_uops", 12},        {"alu_ops", 16 * 3},
      {"dram_read_bytes", 1000}, {"dram_write_bytes", 24}, {"load_bytes_inp", 160},
      {"load_bytes_wgt", 2560},  {"load_bytes_uop", 40},   {"load_bytes_acc", 0},
      {"store_bytes_out", 16},   {"cycles", 1000}};
  const EnergyBreakdown e = estimate_energy(c, counters, 2.0, energy_table());
  EXPECT_DOUBLE_EQ(e.mac, 2560 * 0.3);
  EXPECT_DOUBLE_EQ(e.alu, 48 * 0.1);
  EXPECT_DOUBLE_EQ(e.dram, 1024 * 100.0);
  // Each scratchpad costs what one 64-bit bank of its depth does (depth x 8 bytes).
  // 10 MAC micro-ops read 10 INP tiles plus 160 loaded bytes; INP is 512 deep: 4 KiB banks,
  // below the table's first point (8 KiB, 1 pJ/B).
  EXPECT_DOUBLE_EQ(e.sram_by_memory.at("inp"), (10 * 16 + 160) * 1.0);
  // WGT: 128 deep, 1 KiB banks: 1 pJ/B.
  EXPECT_DOUBLE_EQ(e.sram_by_memory.at("wgt"), (10 * 256 + 2560) * 1.0);
  // ACC banks of 512 entries (4 KiB per 64-bit bank): reads (10 GEMM + 3 ALU) x 64 B + 16 B
  // stored as 64 B of int32, writes (12 GEMM + 3 ALU) x 64 B into both copies.
  EXPECT_DOUBLE_EQ(e.sram_by_memory.at("acc"), ((10 + 3) * 64 + 64 + 2 * (12 + 3) * 64) * 1.0);
  // UOP: 2048 deep, 16 KiB banks: sqrt(2) pJ/B between (8, 1) and (32, 2) on log scales;
  // (12 + 3) micro-ops read, 40 loaded bytes into both copies.
  EXPECT_DOUBLE_EQ(e.sram_by_memory.at("uop"), ((12 + 3) * 4 + 2 * 40) * std::sqrt(2.0));
  // 10 mW/mm2 x 2 mm2 x 10 us = 200 nJ.
  EXPECT_NEAR(e.leakage, 200e3, 1e-6);
}

// STORE INP (extensions.store_inp): its tiles are read from ACC as a STORE OUT's are and
// written into INP on chip, with no DRAM bytes.
TEST(Energy, StoreInpReadsAccAndWritesInp) {
  isa::HwConfig c;  // as above: inp tiles 16 B in 4 KiB banks, acc tiles 64 B in 4 KiB banks
  c.inp_kib = 8;
  c.acc_kib = 64;
  c.store_inp = true;
  const std::map<std::string, uint64_t> counters = {{"store_bytes_inp", 32}, {"cycles", 100}};
  const EnergyBreakdown e = estimate_energy(c, counters, 2.0, energy_table());
  EXPECT_DOUBLE_EQ(e.sram_by_memory.at("inp"), 32 * 1.0);
  EXPECT_DOUBLE_EQ(e.sram_by_memory.at("acc"), 2 * 64 * 1.0);  // two tiles of int32 read
  EXPECT_DOUBLE_EQ(e.dram, 0.0);
}

TEST(Coefficients, EverythingNeedsASource) {
  std::string message;
  try {
    parse_coefficients("coefficients:\n  mac_acc32_pj: {value: 1}\n", "e.yaml", {"mac_acc32_pj"});
  } catch (const Error &e) {
    message = e.what();
  }
  EXPECT_NE(message.find("e.yaml: key 'coefficients.mac_acc32_pj.source'"), std::string::npos)
      << message;
  const CoefficientTable t = energy_table();
  EXPECT_DOUBLE_EQ(t.interpolate("sram_pj_per_byte_by_kib", 16), std::sqrt(2.0));  // log-log
  EXPECT_DOUBLE_EQ(t.interpolate("sram_pj_per_byte_by_kib", 1), 1.0);              // flat
}

TEST(Area, ScalesWithTheArray) {
  const CoefficientTable t = load_area_table(default_area_table());
  isa::HwConfig a, b;
  b.block_in = 32;  // twice the MACs, same ALU lanes
  const Resources r{0, 1000, 0, 0};
  const AreaBreakdown x = estimate_area(a, r, t), y = estimate_area(b, r, t);
  EXPECT_DOUBLE_EQ(y.mac_array, 2 * x.mac_array);
  EXPECT_DOUBLE_EQ(y.alu, x.alu);
  EXPECT_GT(y.total, x.total);
  // 256 MACs of an 8-bit multiplier and a 32-bit adder: 256 x (282 + 137) um2.
  EXPECT_NEAR(x.mac_array, 256 * (282.0 + 137.0) / 1e6, 1e-12);
}

// STORE INP adds a multiplexer on INP's write port: three AND2s per bit of its data (128) and
// address (11 on the default's 2048 entries), nothing else.
TEST(Area, StoreInpAddsTheInpPortMultiplexer) {
  const CoefficientTable t = load_area_table(default_area_table());
  isa::HwConfig off, on;
  on.store_inp = true;
  const Resources r{0, 1000, 0, 0};
  const AreaBreakdown x = estimate_area(off, r, t), y = estimate_area(on, r, t);
  const double mux = (128 + 11) * 3 * t.get("and2_um2") / 1e6;
  EXPECT_NEAR(y.sram_by_memory.at("inp") - x.sram_by_memory.at("inp"), mux, 1e-12);
  EXPECT_NEAR(y.total - x.total, mux / t.get("placement_utilization"), 1e-12);
  EXPECT_DOUBLE_EQ(y.mac_array, x.mac_array);
  EXPECT_DOUBLE_EQ(y.alu, x.alu);
}

TEST(Export, CsvQuotesWhatNeedsIt) {
  std::vector<nlohmann::ordered_json> rows = {{{"a", "x,y"}, {"b", 1.5}, {"c", nullptr}},
                                              {{"a", "say \"hi\""}, {"b", true}}};
  EXPECT_EQ(to_csv(rows, {"a", "b", "c"}), "a,b,c\n\"x,y\",1.5,\n\"say \"\"hi\"\"\",1,\n");
}

// The report's per-extension table: every pair of points that differ in the extension axis
// alone, off against on, with the speedup and the resources it adds, computed here from the
// same rows; a point without its partner (b=16 has no "on" row) makes no row.
TEST(SweepReport, ExtensionPairs) {
  nlohmann::ordered_json doc;
  doc["spec"] = "ext";
  doc["axes"] = {"extensions.alu_clip", "gemm.block_in"};
  auto row = [](int point, const char *clip, const char *b, double cycles, double lut,
                double dsp, double bram, double area, double energy) {
    return nlohmann::ordered_json{
        {"point", point},   {"workload", "w"},   {"status", "ok"},
        {"label", "p"},     {"extensions.alu_clip", clip},
        {"gemm.block_in", b}, {"cycles", cycles}, {"latency_ms", cycles / 1e5},
        {"lut", lut},       {"dsp", dsp},         {"bram", bram},
        {"area_mm2", area}, {"energy_uj", energy}};
  };
  doc["results"] = {row(0, "off", "8", 1200, 20000, 100, 30, 1.5, 9.0),
                    row(1, "on", "8", 1000, 20400, 100, 30, 1.6, 8.0),
                    row(2, "false", "16", 5000, 30000, 200, 40, 2.0, 20.0),
                    row(3, "off", "32", 900, 40000, 300, 50, 3.0, 30.0),
                    row(4, "true", "32", 600, 41000, 300, 50, 3.1, 25.0)};
  const std::string html = render_report(doc);
  EXPECT_NE(html.find("<h3>w: extensions.alu_clip on against off</h3>"), std::string::npos);
  EXPECT_NE(html.find("1.200&times; to 1.500&times; fewer cycles"), std::string::npos) << html;
  // b=8: 1200 -> 1000 cycles, 1.2x, +400 LUT, DSP and BRAM unchanged, +0.1 mm2, -1 uJ.
  EXPECT_NE(html.find("<td class=\"t\">gemm.block_in=8</td><td>1200</td><td>1000</td><td>1.2</td>"
                      "<td>+400</td><td>0</td><td>0</td><td>+0.1</td><td>-1</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"t\">gemm.block_in=32</td><td>900</td><td>600</td><td>1.5</td>"
                      "<td>+1000</td>"),
            std::string::npos);
  EXPECT_EQ(html.find("<td class=\"t\">gemm.block_in=16</td>"), std::string::npos);
  // Without an extension axis, no such table.
  doc["axes"] = {"gemm.block_in"};
  EXPECT_EQ(render_report(doc).find("on against off"), std::string::npos);
}

}  // namespace
}  // namespace vacc::sweep
