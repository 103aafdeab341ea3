#include "vacc/sweep/runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "vacc/support/error.h"
#include "vacc/support/file.h"
#include "vacc/sweep/area.h"
#include "vacc/sweep/assess.h"
#include "vacc/sweep/energy.h"
#include "vacc/sweep/evaluate.h"
#include "vacc/sweep/finalize.h"
#include "vacc/sweep/mpi_transport.h"
#include "vacc/sweep/points.h"
#include "vacc/sweep/progress.h"
#include "vacc/sweep/resources.h"
#include "vacc/sweep/spec.h"
#include "vacc/sweep/store.h"
#include "vacc/sweep/worker_pool.h"

namespace vacc::sweep {

namespace fs = std::filesystem;

namespace {

uint64_t fnv1a(uint64_t h, const std::string &bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Every workload file must be readable before anything runs (and before DIR is touched).
void check_workload_files(const SweepSpec &spec, const std::string &spec_dir) {
  for (size_t i = 0; i < spec.workloads.size(); ++i) {
    const Workload &w = spec.workloads[i];
    if (w.kind != Workload::Kind::kModel) continue;
    for (const auto &[key, path] : {std::pair<std::string, std::string>{"model", w.model},
                                    {"input", w.input},
                                    {"calibration", w.calibration}}) {
      if (path.empty()) continue;
      const std::string full = workload_path(path, spec_dir);
      std::ifstream in(full, std::ios::binary);
      if (!in || fs::is_directory(full))
        fail(
            "{}: key 'workloads[{}].{}': cannot read {} (paths are relative to the spec's "
            "directory)",
            spec.source, i, key, full);
    }
  }
}

// What identifies the results a DIR holds: the base config, axes, constraints and workloads,
// and the bytes of every workload file.
std::string fingerprint(const SweepSpec &spec, const std::string &base_yaml,
                        const std::string &spec_dir) {
  nlohmann::json j;
  j["base"] = base_yaml;
  for (const Axis &a : spec.axes) j["axes"].push_back({a.key, a.values});
  for (const Constraint &c : spec.constraints) j["constraints"].push_back(c.text);
  uint64_t h = 1469598103934665603ull;
  for (const Workload &w : spec.workloads) {
    j["workloads"].push_back(to_json(w));
    for (const std::string &path : {w.model, w.input, w.calibration})
      if (!path.empty()) h = fnv1a(h, read_file(workload_path(path, spec_dir), "workload file"));
  }
  h = fnv1a(h, j.dump());
  return fmt::format("{:016x}", h);
}

// Evenly spread indices of `n` among `count` candidates.
std::vector<size_t> spread(size_t count, int n) {
  std::vector<size_t> out;
  if (n <= 0 || count == 0) return out;
  const size_t k = std::min(count, static_cast<size_t>(n));
  for (size_t i = 0; i < k; ++i) out.push_back(i * count / k);
  return out;
}

// The coordinator's queue: tasks claimed from the store, outcomes committed to it.
class QueueSource : public TaskSource {
 public:
  QueueSource(Store &store, const std::map<int64_t, PointRecord> &points,
              const std::map<std::string, Workload> &workloads, std::string spec_dir,
              std::string synth_cache, Progress &progress)
      : store_(store),
        points_(points),
        workloads_(workloads),
        spec_dir_(std::move(spec_dir)),
        synth_cache_(std::move(synth_cache)),
        progress_(progress),
        owner_(process_owner()) {}

  std::optional<Task> next() override {
    if (exhausted_) return std::nullopt;
    const auto key = store_.claim(owner_);
    if (!key) {
      exhausted_ = true;
      return std::nullopt;
    }
    const PointRecord &p = points_.at(key->point);
    Task t;
    t.key = *key;
    t.config_yaml = p.config_yaml;
    t.config_name = fmt::format("point {}", p.id);
    if (!key->workload.empty()) t.workload = to_json(workloads_.at(key->workload));
    t.base_dir = spec_dir_;
    t.synth_cache = synth_cache_;
    return t;
  }

  void done(const TaskOutcome &o) override {
    store_.finish(o.key, o.ok, o.message, o.result, o.seconds);
    std::string detail;
    if (o.ok && o.key.kind != "synth") {
      uint64_t cycles = 0;
      for (const auto &l : o.result.at("layers")) cycles += l.at("cycles").get<uint64_t>();
      detail = fmt::format("{} cycles ({:.1f} s)", cycles, o.seconds);
    } else if (o.ok) {
      detail = fmt::format("LUT {} FF {} DSP {} ({})", o.result.at("lut").get<int64_t>(),
                           o.result.at("ff").get<int64_t>(), o.result.at("dsp").get<int64_t>(),
                           o.result.at("cached").get<bool>() ? "cached" : "yosys");
    } else {
      detail = o.message;
    }
    const PointRecord &p = points_.at(o.key.point);
    progress_.task(o.key.kind,
                   fmt::format("point {} ({}){}", p.id, p.label,
                               o.key.workload.empty() ? "" : " " + o.key.workload),
                   o.ok, detail);
  }

  bool exhausted() override { return exhausted_; }

 private:
  Store &store_;
  const std::map<int64_t, PointRecord> &points_;
  const std::map<std::string, Workload> &workloads_;
  std::string spec_dir_, synth_cache_;
  Progress &progress_;
  std::string owner_;
  bool exhausted_ = false;
};

int default_jobs(bool mpi) {
  if (mpi) return 1;
  const unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

std::string log_dir(const std::string &out_dir) {
  return (fs::path(out_dir) / "logs").string();
}

std::string worker_executable(const SweepOptions &o) {
  return o.worker_executable.empty() ? self_executable() : o.worker_executable;
}

int coordinate(const SweepOptions &o, const MpiSession *mpi, SweepSummary *out) {
  const std::string spec_text =
      o.spec_text.empty() ? read_file(o.spec_path, "sweep spec") : o.spec_text;
  const SweepSpec spec = parse_spec(spec_text, o.spec_path);
  const std::string spec_dir = fs::absolute(fs::path(o.spec_path)).parent_path().string();
  check_workload_files(spec, spec_dir);
  const std::string base_yaml = base_config_text(spec, spec_dir);
  const std::vector<Point> points = expand_points(spec, base_yaml);
  const CoefficientTable energy =
      load_energy_table(o.energy_table.empty() ? default_energy_table() : o.energy_table);
  const CoefficientTable area =
      load_area_table(o.area_table.empty() ? default_area_table() : o.area_table);
  if (o.out_dir.empty()) fail("give the output directory with -o DIR");

  auto store =
      Store::open(o.out_dir, fingerprint(spec, base_yaml, spec_dir), spec_text, o.spec_path);
  const ResourceModel model = fit_with_synth_results(*store, bundled_samples());

  // Points: invalid ones keep their reason; valid ones get resources, area and constraints.
  std::vector<PointRecord> records;
  std::vector<size_t> valid, runnable;
  for (const Point &p : points) {
    PointRecord r;
    r.id = p.index;
    r.label = p.label();
    for (const auto &[k, v] : p.params) r.params[k] = v;
    r.config_yaml = p.config_yaml;
    if (!p.config) {
      r.status = "invalid";
      r.reason = p.invalid_reason;
    } else {
      assess_hardware(r, *p.config, model.estimate(*p.config), "model", area);
      const auto broken = broken_constraint(r, spec.constraints);
      r.status = broken ? "excluded" : "valid";
      r.reason = broken.value_or("");
      valid.push_back(records.size());
      if (!broken) runnable.push_back(records.size());
    }
    records.push_back(std::move(r));
  }
  store->save_points(records);

  std::vector<TaskKey> tasks;
  for (size_t i : runnable)
    for (const Workload &w : spec.workloads) tasks.push_back({records[i].id, w.name, "run"});
  for (size_t s : spread(valid.size(), o.synth))
    tasks.push_back({records[valid[s]].id, "", "synth"});
  for (size_t s : spread(runnable.size(), o.verify))
    for (const Workload &w : spec.workloads)
      tasks.push_back({records[runnable[s]].id, w.name, "verify"});
  store->add_tasks(tasks);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const int64_t released = store->release_abandoned(host);
  const int64_t retried = o.retry_failed ? store->retry_failed() : 0;

  const TaskCounts counts = store->counts();
  Progress progress(Progress::choose(o.json, stdout), stdout, counts.total(),
                    counts.ok + counts.failed);
  const int64_t invalid = static_cast<int64_t>(points.size() - valid.size());
  const int64_t excluded = static_cast<int64_t>(valid.size() - runnable.size());
  const int jobs = o.jobs > 0 ? o.jobs : default_jobs(mpi != nullptr);
  std::string text = fmt::format(
      "sweep '{}': {} points ({} invalid, {} excluded by constraints), {} workloads; {} tasks, "
      "{} done before{}{}; {} workers{}; results in {}",
      spec.name, points.size(), invalid, excluded, spec.workloads.size(), counts.total(),
      counts.ok + counts.failed,
      released ? fmt::format(", {} taken back from a stopped run", released) : "",
      retried ? fmt::format(", {} failed ones retried", retried) : "", jobs,
      mpi ? fmt::format(" per rank x {} MPI ranks", mpi->size()) : "", store->path());
  progress.start({{"text", text},
                  {"spec", spec.name},
                  {"points", points.size()},
                  {"invalid", invalid},
                  {"excluded", excluded},
                  {"tasks", counts.total()},
                  {"done_before", counts.ok + counts.failed},
                  {"workers", jobs},
                  {"ranks", mpi ? mpi->size() : 1},
                  {"database", store->path()}});
  for (const PointRecord &r : records)
    if (r.status == "invalid")
      progress.note(fmt::format("point {} ({}) invalid: {}", r.id, r.label, r.reason));

  std::map<int64_t, PointRecord> by_id;
  for (const PointRecord &r : records) by_id[r.id] = r;
  std::map<std::string, Workload> workloads;
  for (const Workload &w : spec.workloads) workloads[w.name] = w;
  QueueSource queue(*store, by_id, workloads, spec_dir, o.synth_cache, progress);
  {
    WorkerPool pool(jobs, worker_executable(o), log_dir(o.out_dir), "rank0-");
    if (mpi) {
      auto served = serve_ranks(queue, *mpi);
      pool.run(*served);
    } else {
      pool.run(queue);
    }
  }

  FinalizeInputs in{spec, o.out_dir, energy, area, o.report};
  const SweepSummary summary = finalize_sweep(*store, in);
  progress.finish(summary.json, summary.text);
  if (out) *out = summary;
  return 0;
}

void run_agent(const SweepOptions &o, const MpiSession &mpi) {
  const int jobs = o.jobs > 0 ? o.jobs : default_jobs(true);
  work_for_rank0(jobs, worker_executable(o), log_dir(o.out_dir),
                 fmt::format("rank{}-", mpi.rank()), mpi);
}

}  // namespace

int run_sweep(const SweepOptions &o, SweepSummary *summary) {
  if (!launched_by_mpi()) return coordinate(o, nullptr, summary);
  MpiSession mpi;
  if (mpi.rank() != 0) {
    run_agent(o, mpi);
    return 0;
  }
  try {
    return coordinate(o, &mpi, summary);
  } catch (const Error &e) {
    std::fflush(stdout);
    fmt::print(stderr, "error: {}\n", e.what());
    mpi.abort(1);
  }
  return 1;
}

}  // namespace vacc::sweep
