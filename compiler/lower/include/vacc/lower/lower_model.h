// A compiled graph's accelerator steps, lowered into its package: each step's layer (layer_of)
// goes through lower() and its command list is serialized into the package with its DRAM
// buffers bound to the step's tensors: (data, weight, bias[, shifts], out) for conv and dense,
// with the bias and per-channel shifts broadcast to the operator's [N/B, O/BO, B, BO] layout as
// new constant tensors; (a, b, identity weight, out) for add. The partitioner already asked
// why_not_accelerated() of every step, so each one lowers; an error is a vacc::Error naming it.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "vacc/graph/graph.h"
#include "vacc/isa/config.h"
#include "vacc/isa/package.h"
#include "vacc/lower/operators.h"

namespace vacc::lower {

// A schedule found by `vacc tune` for a layer's workload (compiler/tuning), used instead of
// the default schedule; `source` says where it came from ("tuning database", a log's path).
struct TunedSchedule {
  AccelSchedule schedule;
  std::string source;
  uint64_t cycles = 0;  // what the tuner measured
};
using TunedLookup = std::function<std::optional<TunedSchedule>(const Layer &)>;

struct ModelLowerOptions {
  int vthreads = 2;
  bool verify = true;  // verify the IR after every pass
  // When set, every pass's IR of every accelerator layer is written under DIR/<NNN>_<layer>/,
  // with its final command list as commands.txt.
  std::string dump_dir;
  std::function<void(const std::string &)> log;  // one line per layer, with its time
  // Tuned schedules, when any: a layer whose workload has one takes it (when it passes the
  // operator's rules and lowers; else the default schedule, and the log says why).
  TunedLookup tuned;
  // Called with each accelerator step's index and layer, as it is lowered.
  std::function<void(size_t step, const Layer &layer)> on_layer;
};

// `graph` is the compiled graph `package` was made from (node i is step i). Returns the
// number of steps lowered.
int lower_model(const graph::Graph &graph, const isa::HwConfig &config, isa::Package &package,
                const ModelLowerOptions &options = {});

}  // namespace vacc::lower
