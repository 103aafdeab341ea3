// Where the loop-order knob (AccelSchedule::resident) pays: every accelerator workload of a
// model on a config, its heuristic schedule's tiles measured on perf in each order (none,
// weights resident, inputs resident; "-" where the operand does not fit), and the model's
// cycles under the heuristic as compiled and with each workload at its best order.
//
//   build/bench/bench_loop_order [MODEL.onnx] [--config C] [--batch N]
//
// Without a model: the bundled Fashion-MNIST CNN on config small (as `make bench` runs it).
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
    std::string model, config_name;
    int64_t batch = 1;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--config" && i + 1 < argc) config_name = argv[++i];
      else if (a == "--batch" && i + 1 < argc) batch = std::stoll(argv[++i]);
      else model = a;
    }
    if (model.empty()) {
      model = std::string(VACC_SOURCE_DIR) + "/models/fashion_mnist_cnn.onnx";
      if (config_name.empty()) config_name = "small";
    }
    if (config_name.empty()) config_name = "default";
    const isa::HwConfig config = isa::load_config(isa::resolve_config_path(config_name));
    compile::CompileOptions options;
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
      // Against the heuristic's own order (a one-row dense layer may keep its input).
      const int own = static_cast<int>(h.resident);
      uint64_t best = cycles[own];
      int at = own;
      for (int r = 0; r < 3; ++r)
        if (cycles[r] && cycles[r] < best) best = cycles[r], at = r;
      total += cycles[own] * t.weight;
      best_total += best * t.weight;
      const std::string name =
          fmt::format("{} ({})", t.workload, lower::describe(h)).substr(0, 70);
      fmt::print("{:<70} {:>3} {:>10} {:>10} {:>10}  {} {:.3f}x\n", name, t.weight, cell[0],
                 cell[1], cell[2], at == 0 ? "none" : at == 1 ? "weights" : "inputs",
                 double(cycles[own]) / double(best));
    }
    fmt::print("model: heuristic {} cycles, each workload's best order {} cycles ({:.3f}x)\n",
               total, best_total, double(total) / double(best_total));
    return 0;
  } catch (const Error &e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
