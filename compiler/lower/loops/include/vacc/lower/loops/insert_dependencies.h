#pragma once

#include "vacc/tir/func.h"

namespace vacc::tir {

// Inserts the dependency tokens that let the load, compute and store engines run decoupled
// yet correctly. Statements are grouped into channels by the virtual thread of the
// scratchpad buffers they touch (one channel without virtual threads). Within a channel,
// consecutive statements on different engines get a push after the first and a pop before
// the second (relayed through compute between load and store); in a loop whose body starts
// and ends on different engines in a channel, the end of each iteration pushes to the
// start of the next, with one token pushed before the loop and drained after it, so the
// counts balance. Each channel has its own tokens: with two threads, the loads of one wait
// only for the computes of the same thread, so they overlap the other thread's compute.
// Requires: intrinsics only (no scalar code on scratchpads), no vthread loops.
// Guarantees: every pop has a matching earlier push in program order (no deadlock), and two
// engines touching the same scratchpad tile are separated by a token (no race); the
// interpreter checks both.
Func insert_dependencies(const Func &f);

}  // namespace vacc::tir
