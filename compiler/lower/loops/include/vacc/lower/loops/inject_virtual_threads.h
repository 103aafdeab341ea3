#pragma once

#include "vacc/tir/func.h"

namespace vacc::tir {

// Expands every `vthread` loop into interleaved copies of its body, one per thread. Each
// buffer allocated inside gets one copy per thread (marked with its thread, so that
// insert_dependencies can give each thread its own tokens). The expansion is pushed into loops
// whose body mixes engines (loads, computes, stores), so that with two threads the loop body reads
// load(t0), load(t1), compute(t0), compute(t1), ...; a nest that runs on one engine (a DMA or
// GEMM nest) is copied whole, so its loops can still fold into one instruction.
// Requires: threads are independent (each writes its own part of the outputs), which
// bind_vthread on a data-parallel axis guarantees. Guarantees: no vthread loop remains.
Func inject_virtual_threads(const Func &f);

}  // namespace vacc::tir
