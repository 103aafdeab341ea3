// Where the loop-order knob (AccelSchedule::resident) pays: every accelerator workload of a
// model on a config, its heuristic schedule measured on perf as compiled, then the same tiles
// with the weights and with the inputs resident (the rule each breaks where it does not fit),
// and the model's cycles with each workload at its best of the three.
//
//   build/bench/bench_loop_order MODEL.onnx [--config C] [--batch N]
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "vacc/isa/config.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/support/error.h"
#include "vacc/tune/measure.h"
#include "vacc/tune/task.h"

int main(int argc, char **argv) {
  using namespace vacc;
  try {
    std::string model, config_name = "default";
    int64_t batch = 1;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--config" && i + 1 < argc) config_name = argv[++i];
      else if (a == "--batch" && i + 1 < argc) batch = std::stoll(argv[++i]);
      else model = a;
    }
    if (model.empty()) fail("usage: bench_loop_order MODEL.onnx [--config C] [--batch N]");
    const isa::HwConfig config = isa::load_config(isa::resolve_config_path(config_name));
    package::CompileOptions options;
    options.batch = batch;
    options.use_tuning_db = false;
    const std::vector<tune::TuneTask> tasks = tune::model_tasks(model, config, options);
    using R = lower::AccelSchedule::Resident;
    fmt::print("{:<70} {:>3} {:>10} {:>10} {:>10}  {}\n", "workload (heuristic schedule)", "x",
               "none", "weights", "inputs", "best");
    uint64_t total = 0, best_total = 0;
    for (const tune::TuneTask &t : tasks) {
      const lower::AccelSchedule h = lower::heuristic_schedule(config, t.layer, 2);
      uint64_t cycles[3] = {0, 0, 0};
      std::string cell[3];
      for (int r = 0; r < 3; ++r) {
        lower::AccelSchedule s = h;
        s.resident = static_cast<R>(r);
        const tuning::Trial trial = tune::measure(config, t.layer, s);
        cycles[r] = trial.cycles.value_or(0);
        cell[r] = trial.ok() ? std::to_string(*trial.cycles) : "-";
      }
      uint64_t best = cycles[0];
      int at = 0;
      for (int r = 1; r < 3; ++r)
        if (cycles[r] && cycles[r] < best) best = cycles[r], at = r;
      total += cycles[0] * t.weight;
      best_total += best * t.weight;
      const std::string name =
          fmt::format("{} ({})", t.workload, lower::describe(h)).substr(0, 70);
      fmt::print("{:<70} {:>3} {:>10} {:>10} {:>10}  {} {:.3f}x\n", name, t.weight, cell[0],
                 cell[1], cell[2], at == 0 ? "none" : at == 1 ? "weights" : "inputs",
                 double(cycles[0]) / double(best));
    }
    fmt::print("model: heuristic {} cycles, each workload's best order {} cycles ({:.3f}x)\n",
               total, best_total, double(total) / double(best_total));
    return 0;
  } catch (const Error &e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
