#include "vacc/sweep/finalize.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "vacc/support/error.h"
#include "vacc/sweep/assess.h"
#include "vacc/sweep/evaluate.h"
#include "vacc/sweep/export.h"
#include "vacc/sweep/metrics.h"
#include "vacc/sweep/pareto.h"
#include "vacc/sweep/points.h"
#include "vacc/sweep/report.h"

namespace vacc::sweep {

namespace fs = std::filesystem;

void write_atomically(const std::string &path, const std::string &text) {
  const std::string tmp = fmt::format("{}.tmp{}", path, getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) fail("{}: cannot write (is the directory writable?)", tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) fail("{}: cannot replace it: {}", path, ec.message());
}

std::vector<SynthSample> synth_samples(Store &store) {
  std::map<int64_t, PointRecord> points;
  for (auto &p : store.points()) points[p.id] = p;
  std::vector<SynthSample> out;
  for (const TaskRecord &t : store.tasks("synth", "ok")) {
    auto it = points.find(t.key.point);
    if (it == points.end()) continue;
    SynthSample s;
    s.name = fmt::format("point {}", t.key.point);
    s.config = point_config(it->second.config_yaml, s.name);
    s.yosys.lut = t.result.at("lut").get<double>();
    s.yosys.ff = t.result.at("ff").get<double>();
    s.yosys.dsp = t.result.at("dsp").get<double>();
    s.yosys.bram = t.result.at("ramb36").get<double>() + t.result.at("ramb18").get<double>() / 2;
    out.push_back(std::move(s));
  }
  return out;
}

ResourceModel fit_with_synth_results(Store &store, const std::vector<SynthSample> &bundled) {
  std::vector<SynthSample> all = bundled;
  for (auto &s : synth_samples(store)) all.push_back(std::move(s));
  return ResourceModel::fit(all);
}

namespace {

nlohmann::json error_json(const ModelError &e) {
  auto r = [](const Resources &x) {
    return nlohmann::json{{"lut", x.lut}, {"ff", x.ff}, {"dsp", x.dsp}, {"bram", x.bram}};
  };
  return {{"samples", e.samples}, {"mean_pct", r(e.mean_pct)}, {"max_pct", r(e.max_pct)}};
}

// Columns of the CSV, after the axis parameters.
const std::vector<std::string> kPointColumns = {
    "lut",  "ff",   "dsp",      "bram",      "resources_source",
    "part", "fits", "area_mm2", "clock_mhz", "peak_macs_per_cycle"};
const std::vector<std::string> kResultColumns = {"cycles",
                                                 "latency_ms",
                                                 "inferences_per_s",
                                                 "utilization",
                                                 "useful_macs",
                                                 "executed_macs",
                                                 "model_macs",
                                                 "cpu_steps",
                                                 "dram_bytes",
                                                 "energy_uj",
                                                 "energy_mac_uj",
                                                 "energy_alu_uj",
                                                 "energy_sram_uj",
                                                 "energy_dram_uj",
                                                 "energy_leakage_uj",
                                                 "edp_uj_ms",
                                                 "pareto_latency_area",
                                                 "pareto_latency_energy",
                                                 "heuristic_cycles",
                                                 "heuristic_latency_ms",
                                                 "tuning_gain",
                                                 "pareto_heuristic_latency_area",
                                                 "pareto_heuristic_latency_energy",
                                                 "tune_trials",
                                                 "tune_s",
                                                 "rtl_cycles",
                                                 "perf_error_pct",
                                                 "verify_message",
                                                 "compile_s",
                                                 "run_s"};

}  // namespace

SweepSummary finalize_sweep(Store &store, const FinalizeInputs &in) {
  const SweepSpec &spec = in.spec;
  // Resources: refit with this sweep's Yosys results; synthesized points take Yosys' counts.
  const std::vector<SynthSample> bundled = bundled_samples();
  const std::vector<SynthSample> synthesized = synth_samples(store);
  std::vector<SynthSample> all = bundled;
  all.insert(all.end(), synthesized.begin(), synthesized.end());
  const ResourceModel model = ResourceModel::fit(all);
  const ResourceModel bundled_model = ResourceModel::fit(bundled);
  std::map<int64_t, Resources> yosys;
  for (const TaskRecord &t : store.tasks("synth", "ok"))
    yosys[t.key.point] = {
        t.result.at("lut").get<double>(), t.result.at("ff").get<double>(),
        t.result.at("dsp").get<double>(),
        t.result.at("ramb36").get<double>() + t.result.at("ramb18").get<double>() / 2};

  std::vector<PointRecord> points = store.points();
  std::map<int64_t, isa::HwConfig> configs;
  for (PointRecord &p : points) {
    if (p.status == "invalid") continue;
    const isa::HwConfig c = point_config(p.config_yaml, fmt::format("point {}", p.id));
    configs.emplace(p.id, c);
    auto y = yosys.find(p.id);
    assess_hardware(p, c, y != yosys.end() ? y->second : model.estimate(c),
                    y != yosys.end() ? "yosys" : "model", in.area_table);
  }
  store.save_points(points);

  // Raw outcomes by (point, workload).
  std::map<std::pair<int64_t, std::string>, TaskRecord> runs, verifies;
  for (auto &t : store.tasks("run")) runs[{t.key.point, t.key.workload}] = t;
  for (auto &t : store.tasks("verify")) verifies[{t.key.point, t.key.workload}] = t;

  std::vector<ResultRow> rows;
  std::map<std::string, std::vector<size_t>> ok_rows;  // workload -> rows with figures
  const std::map<int64_t, PointRecord> by_id = [&] {
    std::map<int64_t, PointRecord> m;
    for (const auto &p : points) m[p.id] = p;
    return m;
  }();
  for (const PointRecord &p : points) {
    for (const Workload &w : spec.workloads) {
      ResultRow r;
      r.point = p.id;
      r.workload = w.name;
      if (p.status != "valid") {
        r.status = p.status;
        r.message = p.reason;
        rows.push_back(std::move(r));
        continue;
      }
      auto run = runs.find({p.id, w.name});
      if (run == runs.end() || run->second.status == "pending" || run->second.status == "running") {
        r.status = run == runs.end() ? "pending" : run->second.status;
      } else if (run->second.status == "failed") {
        r.status = "failed";
        r.message = run->second.message;
      } else {
        r.status = "ok";
        const Measurement m = measurement_from_json(run->second.result);
        r.values = row_metrics(configs.at(p.id), w.batch, p.area_mm2, m, in.energy_table);
        r.values["pareto_latency_area"] = 0;
        r.values["pareto_latency_energy"] = 0;
        auto v = verifies.find({p.id, w.name});
        if (v != verifies.end() && v->second.status == "ok") {
          const Measurement rtl = measurement_from_json(v->second.result);
          const double perf = static_cast<double>(m.cycles());
          const double ref = static_cast<double>(rtl.cycles());
          r.values["rtl_cycles"] = rtl.cycles();
          r.values["perf_error_pct"] = ref > 0 ? 100.0 * (perf - ref) / ref : 0.0;
        } else if (v != verifies.end() && v->second.status == "failed") {
          r.values["verify_message"] = v->second.message;
        }
        ok_rows[w.name].push_back(rows.size());
      }
      rows.push_back(std::move(r));
    }
  }

  // Pareto fronts per workload.
  for (const auto &[workload, idx] : ok_rows) {
    std::vector<std::pair<double, double>> by_area, by_energy;
    for (size_t i : idx) {
      const double latency = rows[i].values["latency_ms"].get<double>();
      by_area.emplace_back(latency, by_id.at(rows[i].point).area_mm2);
      by_energy.emplace_back(latency, rows[i].values["energy_uj"].get<double>());
    }
    const auto fa = pareto_front(by_area), fe = pareto_front(by_energy);
    for (size_t k = 0; k < idx.size(); ++k) {
      rows[idx[k]].values["pareto_latency_area"] = fa[k] ? 1 : 0;
      rows[idx[k]].values["pareto_latency_energy"] = fe[k] ? 1 : 0;
    }
    // Tuned points: the fronts again with every point at its heuristic latency, so that a
    // user sees which rankings the tuning changed. (Energy is the tuned run's.)
    bool tuned = true;
    for (size_t i : idx) tuned = tuned && rows[i].values.contains("heuristic_latency_ms");
    if (!tuned) continue;
    for (size_t k = 0; k < idx.size(); ++k) {
      const double h = rows[idx[k]].values["heuristic_latency_ms"].get<double>();
      by_area[k].first = h;
      by_energy[k].first = h;
    }
    const auto ha = pareto_front(by_area), he = pareto_front(by_energy);
    for (size_t k = 0; k < idx.size(); ++k) {
      rows[idx[k]].values["pareto_heuristic_latency_area"] = ha[k] ? 1 : 0;
      rows[idx[k]].values["pareto_heuristic_latency_energy"] = he[k] ? 1 : 0;
    }
  }
  store.save_results(rows);

  // Joined records for the exports and the report.
  std::vector<std::string> axis_keys;
  for (const Axis &a : spec.axes) axis_keys.push_back(a.key);
  std::vector<nlohmann::ordered_json> records;
  for (const ResultRow &r : rows) {
    const PointRecord &p = by_id.at(r.point);
    nlohmann::ordered_json j;
    j["point"] = r.point;
    j["workload"] = r.workload;
    j["status"] = r.status;
    j["message"] = r.message;
    j["label"] = p.label;
    for (const auto &k : axis_keys) j[k] = p.params.value(k, "");
    if (p.status != "invalid") {
      j["lut"] = std::round(p.lut);
      j["ff"] = std::round(p.ff);
      j["dsp"] = std::round(p.dsp);
      j["bram"] = p.bram;
      j["resources_source"] = p.resources_source;
      j["part"] = p.part;
      j["fits"] = p.fits;
      j["area_mm2"] = p.area_mm2;
      j["clock_mhz"] = p.clock_mhz;
      j["peak_macs_per_cycle"] = p.peak_macs_per_cycle;
      j["dram_bytes_per_cycle"] = p.dram_bytes_per_cycle;
      j["area_split"] = p.area_split;
    }
    for (const auto &[k, v] : r.values.items()) j[k] = v;
    records.push_back(std::move(j));
  }
  std::vector<std::string> columns = {"point", "workload", "status", "message", "label"};
  columns.insert(columns.end(), axis_keys.begin(), axis_keys.end());
  columns.insert(columns.end(), kPointColumns.begin(), kPointColumns.end());
  columns.insert(columns.end(), kResultColumns.begin(), kResultColumns.end());
  write_atomically((fs::path(in.out_dir) / "results.csv").string(), to_csv(records, columns));

  // Resource model: its leave-one-out error on every Yosys result, and the error of the
  // model fitted without this sweep's results on them (out of sample).
  nlohmann::ordered_json model_json;
  model_json["coefficients"] = model.describe();
  model_json["bundled_samples"] = bundled.size();
  model_json["sweep_samples"] = synthesized.size();
  model_json["leave_one_out_error"] = error_json(ResourceModel::cross_validate(all));
  if (!synthesized.empty())
    model_json["bundled_model_error_on_sweep_samples"] =
        error_json(bundled_model.error_on(synthesized));

  nlohmann::ordered_json doc;
  doc["spec"] = spec.name;
  doc["axes"] = axis_keys;
  doc["energy_table"] = in.energy_table.path;
  doc["area_table"] = in.area_table.path;
  doc["resource_model"] = model_json;
  doc["results"] = records;
  write_atomically((fs::path(in.out_dir) / "results.json").string(), doc.dump(1));
  if (in.report)
    write_atomically((fs::path(in.out_dir) / "report.html").string(), render_report(doc));

  // Summary.
  std::map<std::string, int64_t> by_status;
  for (const auto &r : rows) ++by_status[r.status];
  SweepSummary s;
  s.results = doc;
  s.json["event"] = "finish";
  s.json["rows"] = by_status;
  s.json["database"] = store.path();
  s.text = fmt::format("\n{} rows: {} ok, {} failed, {} invalid, {} excluded, {} pending\n",
                       rows.size(), by_status["ok"], by_status["failed"], by_status["invalid"],
                       by_status["excluded"], by_status["pending"] + by_status["running"]);
  for (const auto &[workload, idx] : ok_rows) {
    size_t best = idx.front();
    for (size_t i : idx)
      if (rows[i].values["latency_ms"].get<double>() <
          rows[best].values["latency_ms"].get<double>())
        best = i;
    const auto &b = rows[best];
    int front = 0;
    for (size_t i : idx) front += rows[i].values["pareto_latency_area"].get<int>();
    s.text += fmt::format(
        "{}: fastest point {} ({}): {:.3f} ms, utilization {:.1f}%, {:.1f} uJ, {:.2f} mm2; "
        "{} points on the latency/area front\n",
        workload, b.point, by_id.at(b.point).label, b.values["latency_ms"].get<double>(),
        100 * b.values["utilization"].get<double>(), b.values["energy_uj"].get<double>(),
        by_id.at(b.point).area_mm2, front);
    s.json["best"][workload] = {{"point", b.point}, {"latency_ms", b.values["latency_ms"]}};
    if (b.values.contains("heuristic_latency_ms")) {
      // The ranking the heuristic's schedules would have given.
      size_t hbest = idx.front();
      for (size_t i : idx)
        if (rows[i].values["heuristic_latency_ms"].get<double>() <
            rows[hbest].values["heuristic_latency_ms"].get<double>())
          hbest = i;
      int hfront = 0;
      for (size_t i : idx) hfront += rows[i].values["pareto_heuristic_latency_area"].get<int>();
      s.text += fmt::format(
          "{}: tuned, the fastest point is {:.3f}x faster than under the heuristic's schedules; "
          "with those, point {} ({}) would be fastest at {:.3f} ms, and {} points on the "
          "latency/area front\n",
          workload, b.values["tuning_gain"].get<double>(), rows[hbest].point,
          by_id.at(rows[hbest].point).label,
          rows[hbest].values["heuristic_latency_ms"].get<double>(), hfront);
      s.json["best_heuristic"][workload] = {
          {"point", rows[hbest].point},
          {"latency_ms", rows[hbest].values["heuristic_latency_ms"]}};
    }
  }
  int verified = 0;
  double worst = 0;
  for (const auto &r : rows)
    if (r.values.contains("perf_error_pct") && !r.values["perf_error_pct"].is_null()) {
      ++verified;
      worst = std::max(worst, std::abs(r.values["perf_error_pct"].get<double>()));
    }
  if (verified) {
    s.text += fmt::format("verified on rtl: {} rows, perf's largest cycle error {:.3f}%\n",
                          verified, worst);
    s.json["verified"] = {{"rows", verified}, {"max_abs_error_pct", worst}};
  }
  if (!synthesized.empty()) {
    const ModelError e = bundled_model.error_on(synthesized);
    s.text += fmt::format(
        "Yosys on {} points: resource model error (mean) LUT {:.1f}%, FF {:.1f}%, DSP {:.1f}%, "
        "BRAM {:.1f}%\n",
        e.samples, e.mean_pct.lut, e.mean_pct.ff, e.mean_pct.dsp, e.mean_pct.bram);
    s.json["resource_model_error"] = error_json(e);
  }
  s.text += fmt::format("wrote {0}/results.csv, {0}/results.json{1}\n", in.out_dir,
                        in.report ? fmt::format(", {}/report.html", in.out_dir) : "");
  return s;
}

}  // namespace vacc::sweep
