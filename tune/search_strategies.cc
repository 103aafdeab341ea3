// The search strategies (search_strategy.h): what they share (the heuristic first, no point
// proposed twice) and grid, random and anneal; the model-guided one is model_strategy.cc.
#include <algorithm>
#include <cmath>
#include <random>

#include "model_strategy.h"
#include "vacc/support/error.h"
#include "vacc/tune/search_strategy.h"

namespace vacc::tune {

StrategyBase::StrategyBase(const Candidates &c, uint64_t seed)
    : c_(c), taken_(c.size(), false), rng_(seed) {}

std::vector<size_t> StrategyBase::propose(size_t n) {
  std::vector<size_t> out;
  if (c_.heuristic && !taken_[*c_.heuristic] && n > 0) {
    taken_[*c_.heuristic] = true;
    out.push_back(*c_.heuristic);
  }
  if (out.size() < n) pick(n - out.size(), &out);
  return out;
}

void StrategyBase::observe(size_t position, std::optional<uint64_t> cycles) {
  taken_[position] = true;
  if (cycles && (!best_ || *cycles < best_cycles_)) {
    best_ = position;
    best_cycles_ = *cycles;
  }
  on_observe(position, cycles);
}

bool StrategyBase::take(size_t position, std::vector<size_t> *out) {
  if (taken_[position]) return false;
  taken_[position] = true;
  out->push_back(position);
  return true;
}

void StrategyBase::pick_random(size_t n, std::vector<size_t> *out) {
  std::vector<size_t> free;
  for (size_t i = 0; i < c_.size(); ++i)
    if (!taken_[i]) free.push_back(i);
  std::shuffle(free.begin(), free.end(), rng_);
  for (size_t i = 0; i < free.size() && n > 0; ++i, --n) take(free[i], out);
}

namespace {

class GridStrategy : public StrategyBase {
 public:
  using StrategyBase::StrategyBase;

 private:
  void pick(size_t n, std::vector<size_t> *out) override {
    for (; next_ < c_.size() && n > 0; ++next_)
      if (take(next_, out)) --n;
  }
  size_t next_ = 0;
};

class RandomStrategy : public StrategyBase {
 public:
  using StrategyBase::StrategyBase;

 private:
  void pick(size_t n, std::vector<size_t> *out) override { pick_random(n, out); }
};

// Simulated annealing: a walk that moves to a measured neighbour when it is faster, or slower
// with probability exp(-(log2 cycles - log2 current) / T), T cooling geometrically. Proposals
// are unmeasured neighbours of the walk's point (and of the best when it has none), else
// random points.
class AnnealStrategy : public StrategyBase {
 public:
  AnnealStrategy(const Candidates &c, uint64_t seed) : StrategyBase(c, seed) {}

 private:
  void pick(size_t n, std::vector<size_t> *out) override {
    for (int round = 0; n > 0 && round < 64; ++round) {
      const std::optional<size_t> from = current_ ? current_ : best_;
      if (!from) break;
      std::vector<size_t> around = neighbours(*from);
      if (around.empty() && best_ && *from != *best_) around = neighbours(*best_);
      std::shuffle(around.begin(), around.end(), rng_);
      bool any = false;
      for (size_t p : around)
        if (n > 0 && take(p, out)) {
          --n;
          any = true;
        }
      if (!any) {
        // The walk's neighbourhood is measured: restart it from a random unmeasured point.
        std::vector<size_t> one;
        pick_random(1, &one);
        if (one.empty()) return;
        out->push_back(one[0]);
        --n;
        current_ = one[0];
      }
    }
    if (n > 0) pick_random(n, out);
  }

  void on_observe(size_t position, std::optional<uint64_t> cycles) override {
    if (!cycles) return;
    const double cost = std::log2(double(*cycles));
    if (!current_) {
      current_ = position;
      current_cost_ = cost;
      return;
    }
    const double accept = std::exp(-(cost - current_cost_) / temperature_);
    if (cost < current_cost_ || std::uniform_real_distribution<double>(0, 1)(rng_) < accept) {
      current_ = position;
      current_cost_ = cost;
    }
    temperature_ = std::max(0.01, temperature_ * 0.95);
  }

  // The legal points one knob step away.
  std::vector<size_t> neighbours(size_t position) const {
    std::vector<size_t> out;
    std::vector<size_t> ch = c_.choices[position];
    for (size_t k = 0; k < ch.size(); ++k) {
      const size_t was = ch[k];
      for (int d : {-1, 1}) {
        if ((d < 0 && was == 0) || was + d >= c_.space.knobs[k].values.size()) continue;
        ch[k] = was + d;
        if (auto p = c_.find(ch)) out.push_back(*p);
      }
      ch[k] = was;
    }
    return out;
  }

  std::optional<size_t> current_;
  double current_cost_ = 0, temperature_ = 0.5;
};

}  // namespace

const std::vector<std::string> &strategy_names() {
  static const std::vector<std::string> names = {"random", "grid", "anneal", "model"};
  return names;
}

std::unique_ptr<SearchStrategy> make_strategy(const std::string &name, const Candidates &c,
                                              uint64_t seed,
                                              const std::vector<std::vector<float>> *features,
                                              const CostModel *model) {
  if (name == "grid") return std::make_unique<GridStrategy>(c, seed);
  if (name == "random") return std::make_unique<RandomStrategy>(c, seed);
  if (name == "anneal") return std::make_unique<AnnealStrategy>(c, seed);
  if (name == "model") {
    VACC_CHECK(features && model) << "the model strategy needs features and a model";
    return make_model_strategy(c, seed, *features, *model);
  }
  fail("--strategy '{}': choose random, grid, anneal or model", name);
}

}  // namespace vacc::tune
