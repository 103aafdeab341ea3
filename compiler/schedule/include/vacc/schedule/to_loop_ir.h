// Lowers a scheduled compute to loop IR. Requires: a Schedule whose stages form a DAG from
// the given args. Guarantees: one loop per leaf axis, in leaf order, with constant extents;
// every stage computed at a loop of another is realized there (an Allocate in its scope)
// with the shape bounds inference gives it (the region its consumers read inside that loop,
// partial tiles included; a region that spans the whole axis also spans what a tail tile
// reads past the axis's end); reads beyond a DRAM tensor become zero through a guard; a split
// that does not divide its axis leaves an `if` around the store; tensorize and pragma marks
// become Attr nodes around the marked loop.
#pragma once

#include <string>
#include <vector>

#include "vacc/schedule/schedule.h"
#include "vacc/tir/func.h"

namespace vacc::schedule {

// `args` are the DRAM tensors of the function: placeholders and outputs, in call order.
tir::Func to_loop_ir(const Schedule &s, const std::string &name, const std::vector<Tensor> &args);

}  // namespace vacc::schedule
