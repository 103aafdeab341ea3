#include "vacc/sweep/task.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

#include "vacc/hw/synth.h"
#include "fd_io.h"
#include "vacc/support/error.h"
#include "vacc/sweep/evaluate.h"
#include "vacc/sweep/points.h"
#include "vacc/tune/measure.h"

namespace vacc::sweep {

nlohmann::json to_json(const Task &t) {
  return {{"point", t.key.point},         {"workload", t.key.workload},   {"kind", t.key.kind},
          {"config_yaml", t.config_yaml}, {"config_name", t.config_name}, {"spec", t.workload},
          {"base_dir", t.base_dir},       {"synth_cache", t.synth_cache}};
}

Task task_from_json(const nlohmann::json &j) {
  Task t;
  t.key = {j.at("point").get<int64_t>(), j.at("workload").get<std::string>(),
           j.at("kind").get<std::string>()};
  t.config_yaml = j.at("config_yaml").get<std::string>();
  t.config_name = j.at("config_name").get<std::string>();
  t.workload = j.at("spec");
  t.base_dir = j.at("base_dir").get<std::string>();
  t.synth_cache = j.at("synth_cache").get<std::string>();
  return t;
}

nlohmann::json to_json(const TaskOutcome &o) {
  return {{"point", o.key.point}, {"workload", o.key.workload}, {"kind", o.key.kind},  {"ok", o.ok},
          {"message", o.message}, {"result", o.result},         {"seconds", o.seconds}};
}

TaskOutcome outcome_from_json(const nlohmann::json &j) {
  TaskOutcome o;
  o.key = {j.at("point").get<int64_t>(), j.at("workload").get<std::string>(),
           j.at("kind").get<std::string>()};
  o.ok = j.at("ok").get<bool>();
  o.message = j.at("message").get<std::string>();
  o.result = j.at("result");
  o.seconds = j.at("seconds").get<double>();
  return o;
}

namespace {

nlohmann::json synthesize(const Task &t, isa::HwConfig config) {
  // The RTL package names its config; one name for every point makes the Yosys cache key a
  // hash of the hardware parameters alone, so equal hardware is synthesized once.
  config.name = "sweep-point";
  hw::SynthOptions o;
  o.cache_dir = t.synth_cache;
  const hw::SynthReport r = hw::synthesize(config, o);
  return {{"lut", r.luts},        {"ff", r.ffs},        {"dsp", r.dsps},
          {"ramb36", r.ramb36},   {"ramb18", r.ramb18}, {"lutram", r.lutram},
          {"seconds", r.seconds}, {"cached", r.cached}, {"key", r.key}};
}

}  // namespace

TaskOutcome run_task(const Task &t) {
  const auto t0 = std::chrono::steady_clock::now();
  TaskOutcome o;
  o.key = t.key;
  try {
    if (t.key.kind == "tune-trial") {
      // `vacc tune`'s candidates (tune_pool.h): the request carries its own config.
      o.result = tune::run_measure_request(t.workload);
      o.ok = true;
      o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return o;
    }
    const isa::HwConfig config = point_config(t.config_yaml, t.config_name);
    if (t.key.kind == "synth") {
      o.result = synthesize(t, config);
    } else {
      const std::string engine = t.key.kind == "verify" ? "rtl" : "perf";
      o.result = to_json(evaluate(config, workload_from_json(t.workload), t.base_dir, engine));
    }
    o.ok = true;
  } catch (const Error &e) {
    o.message = e.what();
  } catch (const std::exception &e) {
    o.message = std::string("internal error: ") + e.what();
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

int worker_main(int in_fd, int out_fd) {
  std::string buffer;
  char chunk[65536];
  for (;;) {
    size_t newline;
    while ((newline = buffer.find('\n')) != std::string::npos) {
      const std::string line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      TaskOutcome o;
      try {
        o = run_task(task_from_json(nlohmann::json::parse(line)));
      } catch (const std::exception &e) {
        std::fprintf(stderr, "sweep worker: bad task message: %s\n", e.what());
        return 2;
      }
      if (!write_all(out_fd, to_json(o).dump() + "\n")) return 3;
    }
    const ssize_t n = read(in_fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace vacc::sweep
