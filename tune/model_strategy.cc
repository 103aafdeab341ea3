// The model-guided strategy (search_strategy.h): the shared cost model ranks the task's
// unmeasured candidates; the best-ranked nine in ten are measured, the rest drawn at random
// (before the model is trained: at random near the heuristic's instruction count).
#include <algorithm>
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
  void pick(size_t n, std::vector<size_t> *out) override {
    if (!model_.trained()) return pick_cold(n, out);
    const size_t start = out->size();
    std::vector<size_t> free;
    std::vector<std::vector<float>> rows;
    for (size_t i = 0; i < c_.size(); ++i)
      if (!taken_[i]) {
        free.push_back(i);
        rows.push_back(features_[i]);
      }
    if (free.empty()) return;
    const std::vector<float> score = model_.predict(rows);
    std::vector<size_t> order(free.size());
    std::iota(order.begin(), order.end(), 0);
    const size_t ranked = std::max<size_t>(1, n - n / 10);
    const size_t keep = std::min(ranked, order.size());
    std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                      [&](size_t a, size_t b) { return score[a] < score[b]; });
    for (size_t i = 0; i < keep; ++i) take(free[order[i]], out);
    if (out->size() - start < n) pick_random(n - (out->size() - start), out);
  }

  // Before the model has trials to learn from: at random, among the candidates estimated to
  // need at most 4x the heuristic point's instructions. A schedule of many times its
  // instructions (tiny tiles) is rarely faster, and it is the dearest to measure: lowering and
  // simulating take time in proportion to the instructions (one such ResNet-18 stem candidate
  // on config small took 47 s, a third of the whole search's wall time).
  void pick_cold(size_t n, std::vector<size_t> *out) {
    if (!c_.heuristic) return pick_random(n, out);
    const float bound = features_[*c_.heuristic][kInstructionsFeature] + 2;  // log2(4)
    std::vector<size_t> near;
    for (size_t i = 0; i < c_.size(); ++i)
      if (!taken_[i] && features_[i][kInstructionsFeature] <= bound) near.push_back(i);
    std::shuffle(near.begin(), near.end(), rng_);
    for (size_t i = 0; i < near.size() && n > 0; ++i)
      if (take(near[i], out)) --n;
    if (n > 0) pick_random(n, out);
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
