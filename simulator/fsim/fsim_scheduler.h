// The order in which fsim executes a program: the FETCH unit dispatches instructions in
// program order to per-engine queues of bounded depth, and each engine's head instruction
// runs when its dependency tokens allow. Among runnable heads the lowest program index goes
// first, so a race-free program sees the hardware's results. A state where nothing can run
// is a deadlock, reported as a vacc::Error naming every waiting instruction.
#pragma once

#include <functional>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/isa/insn.h"

namespace vacc::sim {

// Calls `execute(index)` for each instruction in a legal order; throws on deadlock.
// Instructions must already be checked for flags their engine does not have. `latest_first`:
// among runnable heads the highest program index goes first (FsimOptions::latest_first).
void schedule_program(const isa::HwConfig &config, const std::vector<isa::Insn> &insns,
                      const std::function<void(size_t)> &execute, bool latest_first = false);

}  // namespace vacc::sim
