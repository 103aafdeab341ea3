// `vacc calibrate --config C`: the perf engine against the rtl engine on the same workloads
// (calibration.h): progen's random programs, the ResNet-18 conv layers, the bundled model and
// any --model. Prints per workload the cycles of both, the error, the first instruction whose
// start diverges and the wall times; then per group the share within the calibration bounds
// (5% per random program, 2% per layer and per model) and the speed-up of perf over rtl.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibration.h"
#include "commands.h"
#include "vacc/cli/model_runner.h"
#include "vacc/cli/output.h"
#include "vacc/support/error.h"

namespace vacc::cli {
namespace {

struct CalibrateArgs {
  std::string config = "default";
  uint64_t seeds = 200, start = 0;
  std::vector<std::string> workloads = {"progen", "convs", "models"};
  std::string layers;
  std::vector<std::string> models;
  bool json = false, all_rows = false, no_build = false;
};

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string signed_pct(double v) {
  return fmt::format("{:+.2f}%", 100 * v);
}

struct GroupSummary {
  std::string group;
  size_t rows = 0, within = 0, exact = 0;
  double bound = 0, worst = 0, rtl_seconds = 0, perf_seconds = 0;
  uint64_t rtl_cycles = 0, perf_cycles = 0;
  bool same_memory = true;
};

void calibrate(const CalibrateArgs &a) {
  const isa::HwConfig config = load_named_config(a.config);
  std::vector<CalibrationRow> rows;
  for (const std::string &w : a.workloads) {
    std::vector<CalibrationRow> add;
    if (w == "progen") {
      add = calibrate_progen(config, a.start, a.seeds, !a.no_build);
    } else if (w == "convs") {
      add = calibrate_convs(config, split(a.layers), !a.no_build);
    } else if (w == "models") {
      std::vector<std::string> models = a.models;
      models.insert(models.begin(), bundled_model());
      for (const std::string &m : models) {
        std::vector<CalibrationRow> r = calibrate_model(config, m, !a.no_build);
        add.insert(add.end(), r.begin(), r.end());
      }
    } else {
      fail("--workloads: unknown workload '{}' (choose progen, convs, models)", w);
    }
    rows.insert(rows.end(), add.begin(), add.end());
  }

  // Per group: random programs are held to 5% each, layers and whole models to 2%.
  std::vector<GroupSummary> groups;
  for (const CalibrationRow &r : rows) {
    if (groups.empty() || groups.back().group != r.group) {
      groups.push_back({});
      groups.back().group = r.group;
      groups.back().bound = r.group == "progen" ? 0.05 : 0.02;
    }
    GroupSummary &g = groups.back();
    ++g.rows;
    g.within += std::abs(r.error()) <= g.bound;
    g.exact += r.rtl_cycles == r.perf_cycles;
    g.worst = std::max(g.worst, std::abs(r.error()));
    g.rtl_cycles += r.rtl_cycles;
    g.perf_cycles += r.perf_cycles;
    g.rtl_seconds += r.rtl_seconds;
    g.perf_seconds += r.perf_seconds;
    g.same_memory = g.same_memory && r.same_memory;
  }
  auto total_error = [](const GroupSummary &g) {
    return g.rtl_cycles ? (double(g.perf_cycles) - double(g.rtl_cycles)) / double(g.rtl_cycles)
                        : 0.0;
  };

  if (a.json) {
    nlohmann::ordered_json j;
    j["config"] = config.name;
    j["rows"] = nlohmann::ordered_json::array();
    for (const CalibrationRow &r : rows)
      j["rows"].push_back({{"group", r.group},
                           {"workload", r.workload},
                           {"rtl_cycles", r.rtl_cycles},
                           {"perf_cycles", r.perf_cycles},
                           {"error", r.error()},
                           {"first_divergence", describe_divergence(r.divergence)},
                           {"rtl_seconds", r.rtl_seconds},
                           {"perf_seconds", r.perf_seconds},
                           {"same_memory", r.same_memory}});
    j["groups"] = nlohmann::ordered_json::array();
    for (const GroupSummary &g : groups)
      j["groups"].push_back({{"group", g.group},
                             {"runs", g.rows},
                             {"bound", g.bound},
                             {"within_bound", g.within},
                             {"exact", g.exact},
                             {"worst_error", g.worst},
                             {"rtl_cycles", g.rtl_cycles},
                             {"perf_cycles", g.perf_cycles},
                             {"total_error", total_error(g)},
                             {"rtl_seconds", g.rtl_seconds},
                             {"perf_seconds", g.perf_seconds},
                             {"same_memory", g.same_memory}});
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("calibrate  config {}: perf against rtl\n\n", config.name);
    std::vector<std::vector<std::string>> table = {{"group", "workload", "rtl cycles",
                                                    "perf cycles", "error", "first divergence",
                                                    "rtl s", "perf s"}};
    for (const CalibrationRow &r : rows) {
      // Random programs: only those off by more than their bound, unless --all-rows.
      if (r.group == "progen" && !a.all_rows && std::abs(r.error()) <= 0.05) continue;
      table.push_back({r.group, r.workload, fmt::format("{}", r.rtl_cycles),
                       fmt::format("{}", r.perf_cycles), signed_pct(r.error()),
                       describe_divergence(r.divergence), fmt::format("{:.3f}", r.rtl_seconds),
                       fmt::format("{:.3f}", r.perf_seconds)});
    }
    fmt::print("{}\n", format_table(table));
    std::vector<std::vector<std::string>> sum = {{"group", "runs", "within bound", "exact", "worst",
                                                  "total error", "rtl s", "perf s", "speed-up"}};
    for (const GroupSummary &g : groups)
      sum.push_back(
          {g.group, fmt::format("{}", g.rows),
           fmt::format("{} ({:.1f}%, bound {:.0f}%)", g.within,
                       100.0 * g.within / std::max<size_t>(g.rows, 1), 100 * g.bound),
           fmt::format("{}", g.exact), fmt::format("{:.2f}%", 100 * g.worst),
           signed_pct(total_error(g)), fmt::format("{:.3f}", g.rtl_seconds),
           fmt::format("{:.3f}", g.perf_seconds),
           g.perf_seconds > 0 ? fmt::format("{:.0f}x", g.rtl_seconds / g.perf_seconds) : "-"});
    fmt::print("{}", format_table(sum));
  }
  for (const GroupSummary &g : groups)
    if (!g.same_memory) fail("{}: perf and rtl left different device memory (or outputs)", g.group);
}

}  // namespace

void add_calibrate_command(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "calibrate", "The perf engine's cycles against the rtl engine's, on the same workloads");
  auto a = std::make_shared<CalibrateArgs>();
  cmd->add_option("--config", a->config, "Hardware config (YAML path or bundled name)")
      ->capture_default_str();
  cmd->add_option("--workloads", a->workloads, "Any of: progen convs models")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--seeds", a->seeds, "progen: number of random programs")->capture_default_str();
  cmd->add_option("--start", a->start, "progen: first seed")->capture_default_str();
  cmd->add_option("--layers", a->layers, "convs: a comma-separated subset, e.g. C2,C10");
  cmd->add_option("--model", a->models,
                  "models: another model (.onnx or .vpkg) beside the bundled one; repeatable");
  cmd->add_flag("--all-rows", a->all_rows, "List every random program, not only those off");
  cmd->add_flag("--json", a->json, "Print JSON instead of text");
  add_no_build_flag(cmd, &a->no_build);
  cmd->callback([a] { calibrate(*a); });
}

}  // namespace vacc::cli
