// The model-guided strategy (search_strategy.h): the shared cost model ranks the task's
// unmeasured candidates near the best so far; the best-ranked nine in ten are measured, the
// rest drawn at random (all of them before the model is trained).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "model_strategy.h"
#include "vacc/tune/features.h"

namespace vacc::tune {
namespace {

class ModelStrategy : public StrategyBase {
 public:
  ModelStrategy(const Candidates &c, uint64_t seed, const std::vector<std::vector<float>> &f,
                const CostModel &model)
      : StrategyBase(c, seed), features_(f), model_(model) {}

 private:
  // The model ranks, and the random draws take, only candidates estimated to need at most 4x
  // the instructions of the task's best point so far (before one is measured, the
  // heuristic's). A schedule of many times its instructions (tiny tiles) is rarely faster, and
  // it is the dearest to measure: lowering and simulating take time in proportion to the
  // instructions (one such ResNet-18 stem candidate on config small took 47 s, a third of a
  // whole search's wall time). Nor can a cost model trained near the best rank such far
  // points: it ranked 1x1 tiles of a 7x7 layer first, 9x the best's cycles, 5 s a trial. The
  // bound moves with the best, so the search reaches further in steps.
  void pick(size_t n, std::vector<size_t> *out) override {
    const size_t start = out->size();
    std::vector<size_t> near = near_the_best();
    if (model_.trained() && !near.empty()) {
      std::vector<std::vector<float>> rows;
      for (size_t i : near) rows.push_back(features_[i]);
      const std::vector<float> score = model_.predict(rows);
      std::vector<size_t> order(near.size());
      std::iota(order.begin(), order.end(), 0);
      const size_t keep = std::min(std::max<size_t>(1, n - n / 10), order.size());
      std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                        [&](size_t a, size_t b) { return score[a] < score[b]; });
      for (size_t i = 0; i < keep; ++i) take(near[order[i]], out);
    }
    std::shuffle(near.begin(), near.end(), rng_);
    for (size_t i = 0; i < near.size() && out->size() - start < n; ++i) take(near[i], out);
    if (out->size() - start < n) pick_random(n - (out->size() - start), out);
  }

  // The candidates not yet taken within the bound (every one without a point to bound by).
  std::vector<size_t> near_the_best() const {
    const std::optional<size_t> anchor = best_ ? best_ : c_.heuristic;
    const float bound =
        anchor ? features_[*anchor][kInstructionsFeature] + 2 : HUGE_VALF;  // log2(4)
    std::vector<size_t> near;
    for (size_t i = 0; i < c_.size(); ++i)
      if (!taken_[i] && features_[i][kInstructionsFeature] <= bound) near.push_back(i);
    return near;
  }

  const std::vector<std::vector<float>> &features_;
  const CostModel &model_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_model_strategy(const Candidates &c, uint64_t seed,
                                                    const std::vector<std::vector<float>> &features,
                                                    const CostModel &model) {
  return std::make_unique<ModelStrategy>(c, seed, features, model);
}

}  // namespace vacc::tune
