// The learned cost model that guides `vacc tune --strategy model`, as AutoTVM's was: gradient-
// boosted trees (XGBoost's C API, Debian's libxgboost-dev) over schedule_features, trained
// online on the trials measured so far, of every task and config at once (each trial's target is
// log2 of its cycles over its task's best, so tasks of different sizes teach one model).
// Ranking thousands of candidates takes milliseconds.
#pragma once

#include <vector>

namespace vacc::tune {

class CostModel {
 public:
  CostModel();
  ~CostModel();
  CostModel(const CostModel &) = delete;
  CostModel &operator=(const CostModel &) = delete;

  // Trains a new model on rows `x` (each kNumFeatures long) and targets `y` (lower is
  // faster). Throws vacc::Error with XGBoost's message when it fails.
  void fit(const std::vector<std::vector<float>> &x, const std::vector<float> &y);
  bool trained() const { return booster_ != nullptr; }
  // Predicted targets of `x` (lower is faster); trained() must hold.
  std::vector<float> predict(const std::vector<std::vector<float>> &x) const;

 private:
  void *booster_ = nullptr;
};

// Spearman's rank correlation of two equally long series (ties ranked by their mean).
double rank_correlation(const std::vector<double> &a, const std::vector<double> &b);

}  // namespace vacc::tune
