#include "vacc/graph/passes/partition.h"

namespace vacc::graph {

int partition(Graph &graph, const AccelLegality &legality) {
  int accel = 0;
  for (Node *node : graph.nodes()) {
    node->target = legality && !legality(*node) ? Target::kAccel : Target::kCpu;
    accel += node->target == Target::kAccel;
  }
  return accel;
}

}  // namespace vacc::graph
