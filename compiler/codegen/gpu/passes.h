// The GPU backend's passes on one kernel's block body (private to codegen/gpu). The block body
// is what runs inside the kernel's blockIdx loops: phases (maximal threadIdx loop nests) and
// the uniform code around them (docs/gpu_backend.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "vacc/tir/arith.h"
#include "vacc/tir/node.h"

namespace vacc::codegen::gpu {

// The thread-block shape the phases of `body` need: per axis, the largest extent of a loop
// bound to it. Checks the phase rules (no store outside a phase, no axis bound twice in one
// nest, no shared buffer allocated inside a phase, at most kMaxThreadsPerBlock threads);
// breaking one is a vacc::Error naming `func`.
std::array<int64_t, 3> block_shape(const tir::Stmt &body, const std::string &func);

// Local buffers allocated between phases are one array for the whole block in the sequential
// meaning. Where every access indexes the buffer with each bound thread axis scaled past the
// rest of its index (CL[ty*4 + i, tx*4 + j] with i, j < 4), each thread only ever touches its
// own slice: the buffer becomes that slice, private to the thread (registers). Otherwise it
// moves to shared memory, where the block sees one array as the sequential meaning does.
// `grid` holds the ranges of the kernel's blockIdx variables.
tir::Stmt privatize_locals(const tir::Stmt &body, const std::array<int64_t, 3> &block,
                           const tir::RangeMap &grid);

// Inserts a barrier (kBarrierKey marker) before each phase whose shared or global accesses
// conflict (write after read, read after write, write after write) with a phase since the last
// barrier, including the previous iteration of an enclosing uniform loop.
tir::Stmt insert_barriers(const tir::Stmt &body);

// The barrier marker: an Attr with an empty body.
inline constexpr const char *kBarrierKey = "gpu";
inline constexpr const char *kBarrierValue = "barrier";
tir::Stmt make_barrier();
bool is_barrier(const tir::Stmt &s);

}  // namespace vacc::codegen::gpu
