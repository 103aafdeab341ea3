// `vacc bench resnet18-convs --config C --engine rtl|perf|fsim [--vthreads 1|2] [--json]
// [--layers C2,C3] [--layers-file F] [--timing-only]`: the conv layers of ResNet-18 on the
// accelerator, each checked against a C++ reference (not with --timing-only, which computes
// no data); per layer MACs, cycles, utilization and the roofline-attainable utilization
// (bench/layer_bench.h). A wrong output is an error.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "commands.h"
#include "vacc/cli/tuning_options.h"
#include "vacc/tuning/tuning_db.h"
#include "layer_bench.h"
#include "vacc/cli/output.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace vacc::cli {
namespace {

std::string pct(double v) { return fmt::format("{:.1f}%", 100 * v); }

std::vector<std::string> split_names(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

struct BenchArgs {
  std::string config = "default";
  std::string engine = "rtl";
  int vthreads = 2;
  bool json = false;
  bool no_fold = false;
  bool timing_only = false;
  bool no_build = false;
  std::string layers;
  std::string layers_file;
  uint32_t seed = 1;
  TuningArgs tuning;
};

int run_bench(const BenchArgs &a) {
  const isa::HwConfig config = load_named_config(a.config);
  std::vector<bench::ConvLayerSpec> layers;
  if (a.layers_file.empty()) {
    layers = bench::resnet18_convs();
  } else {
    layers = bench::parse_conv_layers(read_file(a.layers_file, "the --layers-file"),
                                      a.layers_file);
  }
  if (!a.layers.empty()) {
    std::vector<bench::ConvLayerSpec> picked;
    for (const std::string &name : split_names(a.layers)) {
      auto it = std::find_if(layers.begin(), layers.end(),
                             [&](const bench::ConvLayerSpec &l) { return l.name == name; });
      if (it == layers.end()) {
        std::string known;
        for (const auto &l : layers) known += (known.empty() ? "" : ", ") + l.name;
        fail("--layers: no layer '{}' (known: {})", name, known);
      }
      picked.push_back(*it);
    }
    layers = picked;
  }
  bench::LayerBenchOptions o;
  o.engine = a.engine;
  o.vthreads = a.vthreads;
  o.seed = a.seed;
  o.fold = !a.no_fold;
  o.timing_only = a.timing_only;
  o.build_rtl_model = !a.no_build;
  if (a.timing_only && a.engine != "perf")
    fail("--timing-only needs --engine perf (engine is '{}')", a.engine);

  std::vector<bench::LayerResult> results;
  std::vector<std::vector<std::string>> rows = {
      {"layer", "schedule", "MACs", "cycles", "util", "roofline", "roofline(min bytes)",
       "of roofline", "bytes moved", "insns", "check"}};
  nlohmann::json jl = nlohmann::json::array();
  uint64_t bad_layers = 0, total_macs = 0, total_cycles = 0;
  bool all_cycles = true;
  // Tuned schedules (vacc tune --bench resnet18-convs, or a model with the same layers), as
  // compile takes them: the logs given and the tuning database.
  compile::CompileOptions tuning_options;
  apply_tuning_options(a.tuning, &tuning_options);  // checks the logs exist
  const lower::TunedLookup tuned = tuning::tuned_lookup(config, a.tuning.logs, !a.tuning.no_db);
  for (const auto &l : layers) {
    o.schedule.reset();
    const lower::Layer layer{l.name, bench::accel_conv_params(config, l, o.fold)};
    if (tuned)
      if (const auto t = tuned(layer)) o.schedule = t->schedule;
    bench::LayerResult r = bench::run_conv_layer(config, l, o);
    if (o.schedule) r.schedule = "tuned " + r.schedule;
    const bool ok = r.mismatches == 0;
    bad_layers += !ok;
    total_macs += r.macs;
    all_cycles = all_cycles && r.cycles.has_value();
    if (r.cycles) total_cycles += *r.cycles;
    const std::string of_roof = r.cycles ? pct(r.utilization / r.roofline) : "-";
    rows.push_back({r.name + (r.folded ? " (im2col)" : ""), r.schedule,
                    fmt::format("{}", r.macs), r.cycles ? fmt::format("{}", *r.cycles) : "-",
                    r.cycles ? pct(r.utilization) : "-", pct(r.roofline),
                    pct(r.roofline_compulsory), of_roof, fmt::format("{}", r.moved_bytes),
                    fmt::format("{}", r.insns),
                    r.outputs == 0 ? "not checked"
                    : ok           ? "ok"
                                   : fmt::format("{} of {} differ", r.mismatches, r.outputs)});
    nlohmann::json j = {{"layer", r.name},
                        {"folded", r.folded},
                        {"schedule", r.schedule},
                        {"macs", r.macs},
                        {"executed_macs", r.executed_macs},
                        {"moved_bytes", r.moved_bytes},
                        {"compulsory_bytes", r.compulsory_bytes},
                        {"roofline_utilization", r.roofline},
                        {"roofline_utilization_compulsory", r.roofline_compulsory},
                        {"instructions", r.insns},
                        {"compile_seconds", r.compile_s},
                        {"run_seconds", r.run_s},
                        {"mismatches", r.mismatches},
                        {"correct", ok},
                        {"checked", r.outputs != 0},
                        {"counters", r.counters}};
    if (r.cycles) {
      j["cycles"] = *r.cycles;
      j["utilization"] = r.utilization;
      j["fraction_of_roofline"] = r.utilization / r.roofline;
    } else {
      j["cycles"] = nullptr;
    }
    jl.push_back(j);
  }
  if (a.json) {
    nlohmann::json out = {{"benchmark", "resnet18-convs"},
                          {"config", config.name},
                          {"engine", a.engine},
                          {"vthreads", a.vthreads},
                          {"peak_macs_per_cycle", config.peak_macs_per_cycle()},
                          {"dram_bytes_per_cycle", config.mem_bytes_per_cycle},
                          {"layers", jl},
                          {"all_correct", bad_layers == 0}};
    if (all_cycles && total_cycles)
      out["total"] = {{"macs", total_macs},
                      {"cycles", total_cycles},
                      {"utilization",
                       double(total_macs) / (double(total_cycles) * config.peak_macs_per_cycle())}};
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("resnet18-convs  config {}  engine {}  vthreads {}  peak {} MACs/cycle  DRAM {} "
               "B/cycle\n",
               config.name, a.engine, a.vthreads, config.peak_macs_per_cycle(),
               config.mem_bytes_per_cycle);
    fmt::print("{}", format_table(rows));
    if (all_cycles && total_cycles)
      fmt::print("total: {} MACs in {} cycles, utilization {}\n", total_macs, total_cycles,
                 pct(double(total_macs) / (double(total_cycles) * config.peak_macs_per_cycle())));
    else
      fmt::print("(engine {} has no cycle counter: cycles and utilization are '-'; every output "
                 "was still checked)\n",
                 a.engine);
  }
  if (bad_layers)
    fail("{} layer(s) computed outputs that differ from the reference", bad_layers);
  return 0;
}

}  // namespace

void add_bench_command(CLI::App &app) {
  auto *bench = app.add_subcommand("bench", "Benchmarks of compiled workloads on an engine");
  bench->require_subcommand(1);
  auto *cmd = bench->add_subcommand(
      "resnet18-convs",
      "The conv2d layers C1-C12 of ResNet-18 (batch 1, int8, random data) on the accelerator, "
      "each checked against a C++ reference");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("--config", a->config, "Config name or YAML path")->capture_default_str();
  cmd->add_option("--engine", a->engine, "Engine: rtl, perf or fsim")->capture_default_str();
  cmd->add_flag("--timing-only", a->timing_only,
                "--engine perf: count cycles without computing data (outputs not checked)");
  cmd->add_option("--vthreads", a->vthreads, "Virtual threads (latency hiding): 1 or 2")
      ->check(CLI::IsMember({1, 2}))
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Machine-readable output");
  add_no_build_flag(cmd, &a->no_build);
  cmd->add_option("--layers", a->layers, "Comma-separated subset, e.g. C2,C3");
  cmd->add_option("--layers-file", a->layers_file,
                  "A layer table in the format of bench/resnet18_convs.yaml");
  cmd->add_option("--seed", a->seed, "Random data seed")->capture_default_str();
  add_tuning_options(cmd, &a->tuning);
  cmd->add_flag("--no-fold", a->no_fold,
                "Run few-channel layers (C1) unfolded, channels zero-padded to a block");
  cmd->callback([a]() {
    int rc = run_bench(*a);
    if (rc) throw CLI::RuntimeError(rc);
  });
  add_bench_model_command(*bench);
}

}  // namespace vacc::cli
