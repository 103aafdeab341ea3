// Partitioning between the accelerator and the CPU. Whether a node runs on the accelerator is
// decided by the backend's legality (compiler/lower/legality.h), passed in as a callback since
// graph/ does not link the backend: it answers nullopt for a node the accelerator runs, or the
// reason it does not. Everything else runs on the CPU.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "vacc/graph/graph.h"

namespace vacc::graph {

using AccelLegality = std::function<std::optional<std::string>(const Node &)>;

// Sets every node's target (all on the CPU without a legality); returns the number of nodes
// placed on the accelerator.
int partition(Graph &graph, const AccelLegality &legality);

}  // namespace vacc::graph
