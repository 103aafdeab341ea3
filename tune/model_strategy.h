// What the strategies share (search_strategies.cc), and the model-guided one
// (model_strategy.cc). Private to tune/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "vacc/tune/search_strategy.h"

namespace vacc::tune {

// The heuristic's point first, then what pick() chooses; nothing proposed twice.
class StrategyBase : public SearchStrategy {
 public:
  StrategyBase(const Candidates &c, uint64_t seed);
  std::vector<size_t> propose(size_t n) final;
  void observe(size_t position, std::optional<uint64_t> cycles) final;

 protected:
  virtual void pick(size_t n, std::vector<size_t> *out) = 0;
  virtual void on_observe(size_t, std::optional<uint64_t>) {}
  // Appends `position` unless taken before; whether it did.
  bool take(size_t position, std::vector<size_t> *out);
  void pick_random(size_t n, std::vector<size_t> *out);

  const Candidates &c_;
  std::vector<bool> taken_;  // proposed or observed
  std::mt19937_64 rng_;
  std::optional<size_t> best_;
  uint64_t best_cycles_ = 0;
};

std::unique_ptr<SearchStrategy> make_model_strategy(const Candidates &c, uint64_t seed,
                                                    const std::vector<std::vector<float>> &features,
                                                    const CostModel &model);

}  // namespace vacc::tune
