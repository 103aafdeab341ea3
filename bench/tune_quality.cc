// How good `vacc tune`'s search is, on the ResNet-18 conv layers of `vacc bench resnet18-convs`:
// each layer's whole schedule space is measured once on perf (the exhaustive best), then each
// strategy searches it again, replaying those measurements, with a tenth of the legal points as
// its budget, over several seeds: its best against the exhaustive best, and the trials it took
// to come within 1 %. The cost model's rank correlation on held-out points is printed too.
//
//   build/bench/bench_tune_quality [CONFIG] [--seeds N] [--layers C2,C3|all] [--budget 0.1] [--tails]
//
// Without --layers, C11 alone (about two minutes on one core, as `make bench` runs it): the
// exhaustive measurement of every layer takes hours on the current spaces.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "layer_bench.h"
#include "vacc/isa/config.h"
#include "vacc/lower/schedule_space.h"
#include "vacc/support/error.h"
#include "vacc/tune/candidates.h"
#include "vacc/tune/cost_model.h"
#include "vacc/tune/features.h"
#include "vacc/tune/measure.h"
#include "vacc/tune/tuner.h"

namespace {

using namespace vacc;

// Answers from the exhaustive table: a strategy's search replayed without measuring again.
class ReplayMeasurer : public tune::Measurer {
 public:
  explicit ReplayMeasurer(const std::map<std::string, tuning::Trial> &table) : table_(table) {}
  std::vector<tuning::Trial> measure(const isa::HwConfig &,
                                     const std::vector<Request> &requests) override {
    std::vector<tuning::Trial> out;
    for (const auto &[layer, s] : requests) out.push_back(table_.at(lower::describe(s)));
    return out;
  }

 private:
  const std::map<std::string, tuning::Trial> &table_;
};

}  // namespace

int main(int argc, char **argv) {
  try {
    std::string config_name = "default", only = "C11";
    int seeds = 5;
    double budget = 0.1;
    bool tails = false;  // --tails: the space with tail tiles (TuneOptions::tails), both sides
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--tails") tails = true;
      else if (a == "--seeds" && i + 1 < argc) seeds = std::stoi(argv[++i]);
      else if (a == "--layers" && i + 1 < argc) only = argv[++i];
      else if (a == "--budget" && i + 1 < argc) budget = std::stod(argv[++i]);
      else config_name = a;
    }
    const isa::HwConfig config = isa::load_config(isa::resolve_config_path(config_name));
    if (only == "all") only.clear();
    fmt::print("config {}: ResNet-18 conv layers, exhaustive search vs a {:.0f}% budget, {} seeds\n",
               config.name, 100 * budget, seeds);
    fmt::print("{:<5} {:>6} {:>10} {:>10} {:>7} {:>9} | {:>22} {:>22} {:>22} {:>22} | {:>5}\n",
               "layer", "legal", "heuristic", "best", "heur/b", "measure s", "random", "grid",
               "anneal", "model", "rho");
    for (const tune::TuneTask &task : tune::resnet18_conv_tasks(config)) {
      if (!only.empty() && (',' + only + ',').find(',' + task.layers[0] + ',') == std::string::npos)
        continue;
      const tune::Candidates cand = tune::enumerate_candidates(config, task.layer, 2, tails);
      std::map<std::string, tuning::Trial> table;
      const auto t0 = std::chrono::steady_clock::now();
      uint64_t best = UINT64_MAX;
      std::vector<std::vector<float>> features;
      std::vector<double> cycles;
      for (size_t p = 0; p < cand.size(); ++p) {
        const tuning::Trial t = tune::measure(config, task.layer, cand.schedule(p));
        table[lower::describe(cand.schedule(p))] = t;
        if (t.cycles) {
          best = std::min(best, *t.cycles);
          features.push_back(tune::schedule_features(config, task.layer, cand.schedule(p)));
          cycles.push_back(double(*t.cycles));
        }
      }
      const double measure_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const uint64_t heuristic =
          cand.heuristic ? *table.at(lower::describe(cand.schedule(*cand.heuristic))).cycles : 0;
      const int64_t trials = std::max<int64_t>(1, int64_t(std::floor(budget * cand.size())));
      std::string cells;
      for (const char *strategy : {"random", "grid", "anneal", "model"}) {
        // Over the seeds: the worst best-found against the exhaustive best, and the mean trials
        // to come within 1 % of it (the budget when never).
        double worst = 1, to_1pct = 0;
        for (int seed = 1; seed <= seeds; ++seed) {
          tune::TuneOptions o;
          o.trials = trials;
          o.strategy = strategy;
          o.seed = static_cast<uint64_t>(seed);
          o.tails = tails;
          ReplayMeasurer m(table);
          const tune::TuneReport r = tune::tune(config, {task}, o, m);
          const double found = double(*r.tasks[0].best->cycles) / double(best);
          worst = std::max(worst, found);
          int64_t at = trials;
          for (size_t k = 0; k < r.trials.size(); ++k)
            if (r.trials[k].cycles && double(*r.trials[k].cycles) <= 1.01 * double(best)) {
              at = static_cast<int64_t>(k) + 1;
              break;
            }
          to_1pct += double(at) / seeds;
        }
        cells += fmt::format(" {:>22}", fmt::format("{:.4f} @{:.0f}/{}", worst, to_1pct, trials));
      }
      // The cost model on this layer alone: trained on a random half, ranked on the other.
      std::vector<size_t> order(cycles.size());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), std::mt19937(1));
      std::vector<std::vector<float>> tx, hx;
      std::vector<float> ty;
      std::vector<double> hc;
      for (size_t k = 0; k < order.size(); ++k) {
        if (k % 2 == 0) {
          tx.push_back(features[order[k]]);
          ty.push_back(float(std::log2(cycles[order[k]] / double(best))));
        } else {
          hx.push_back(features[order[k]]);
          hc.push_back(cycles[order[k]]);
        }
      }
      double rho = 0;
      if (tx.size() >= 8 && hx.size() >= 2) {
        tune::CostModel model;
        model.fit(tx, ty);
        const std::vector<float> pred = model.predict(hx);
        rho = tune::rank_correlation(std::vector<double>(pred.begin(), pred.end()), hc);
      }
      fmt::print("{:<5} {:>6} {:>10} {:>10} {:>7.4f} {:>9.1f} |{} | {:>5.2f}\n", task.layers[0],
                 cand.size(), heuristic, best, double(heuristic) / double(best), measure_s, cells,
                 rho);
    }
    fmt::print(
        "columns per strategy: its worst best-found / exhaustive best over the seeds, @ mean "
        "trials to within 1% / budget; rho: the cost model's held-out Spearman correlation\n");
    return 0;
  } catch (const Error &e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
