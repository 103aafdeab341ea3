#include "vacc/sweep/pareto.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace vacc::sweep {

std::vector<bool> pareto_front(const std::vector<std::pair<double, double>> &costs) {
  // Sorted by x then y, a point is on the front when its y is below every y seen at a
  // strictly smaller x (or equal to the best at the same x and y).
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs[a] < costs[b]; });
  std::vector<bool> on(costs.size(), false);
  double best_y = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < order.size();) {
    // The group sharing one x: only its smallest y can be on the front (with its ties).
    size_t j = i;
    const double x = costs[order[i]].first, y = costs[order[i]].second;
    while (j < order.size() && costs[order[j]].first == x) ++j;
    if (y < best_y) {
      for (size_t k = i; k < j && costs[order[k]].second == y; ++k) on[order[k]] = true;
      best_y = y;
    }
    i = j;
  }
  return on;
}

}  // namespace vacc::sweep
