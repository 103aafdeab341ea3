// ONNX Slice's starts/ends/axes/steps resolved against a static shape (negative indices,
// clamping, negative steps), shared by the reference kernel and the CPU backend.
#pragma once

#include <vector>

#include "vacc/graph/graph.h"

namespace vacc::graph {

// Output element i of an axis reads input element start + i * step; count elements.
struct SliceAxis {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

// One SliceAxis per axis of `x` (unsliced axes: all of it). Throws vacc::Error on
// inconsistent lengths, a repeated axis or a zero step.
std::vector<SliceAxis> slice_axes(const Shape &x, const std::vector<int64_t> &starts,
                                  const std::vector<int64_t> &ends,
                                  const std::vector<int64_t> &axes,
                                  const std::vector<int64_t> &steps);
// The same for a Slice node, whose inputs 1-4 must be constants.
std::vector<SliceAxis> slice_axes(const Node &slice);

}  // namespace vacc::graph
