// How `vacc tune` picks the next candidates of a task to measure (--strategy):
//   grid    every legal point in index order (exhaustive when given enough trials);
//   random  legal points drawn without replacement;
//   anneal  simulated annealing over the knob lattice (a neighbour changes one knob to an
//           adjacent value), starting from the heuristic's point;
//   model   AutoTVM's way: its operator's cost model (cost_model.h) ranks the unmeasured legal
//           points and the best-ranked are measured (a tenth drawn at random, to keep
//           exploring; all at random until the model has trials to learn from), among the
//           points estimated to need at most 4x the instructions of the best so far (the
//           heuristic's before one is measured).
// Every strategy proposes the heuristic's point first, so a task's best is never worse than it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vacc/tune/candidates.h"
#include "vacc/tune/cost_model.h"

namespace vacc::tune {

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // Up to n candidate positions (into Candidates::points) not measured or proposed before.
  virtual std::vector<size_t> propose(size_t n) = 0;
  // A measurement of candidate `position` (proposed, or read from a resumed log): its cycles,
  // or none when it failed.
  virtual void observe(size_t position, std::optional<uint64_t> cycles) = 0;
};

// The names --strategy accepts.
const std::vector<std::string> &strategy_names();

// `features`: each candidate's schedule_features (the model strategy's; others ignore it).
// `model` is shared by the tasks of one operator and trained by the tuner between rounds. Throws
// vacc::Error for an unknown name.
std::unique_ptr<SearchStrategy> make_strategy(const std::string &name, const Candidates &c,
                                              uint64_t seed,
                                              const std::vector<std::vector<float>> *features,
                                              const CostModel *model);

}  // namespace vacc::tune
