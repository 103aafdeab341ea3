// Which accelerator steps of a package run as one device program: each run of consecutive
// accelerator steps does, so that a step's first weight loads and micro-op loads go under the
// last work of the step before and the pipeline does not drain and refill between them
// (runtime/command_queue.h: begin_step()). The boundary waits only for what the next step
// needs, so a merged program has not been slower than a program per step on any model or
// random chain measured (tests/runtime/program_replay_test.cc, tests/e2e, bench/RESULTS.md).
#pragma once

#include "vacc/isa/package.h"

namespace vacc::lower {

// Marks PackageStep::joins_previous; returns the number of accelerator programs.
int join_programs(isa::Package &package);

}  // namespace vacc::lower
