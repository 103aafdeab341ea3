// Pareto fronts: of a set of points each with two costs to minimize, those no other point
// beats on one cost without losing on the other (ties on both keep every copy).
#pragma once

#include <utility>
#include <vector>

namespace vacc::sweep {

// For each (x, y), whether it is on the front (minimizing both).
std::vector<bool> pareto_front(const std::vector<std::pair<double, double>> &costs);

}  // namespace vacc::sweep
