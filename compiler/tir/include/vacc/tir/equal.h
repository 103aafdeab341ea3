// Structural equality of loop IR: same node kinds, fields and constants. Variables bound by
// loops, buffers bound by Allocate and a Func's parameters correspond through their binding
// site (a consistent one-to-one renaming), so an `expected` IR built separately from a
// pass's output compares equal when it has the same shape. Free variables and buffers must
// be the same objects, unless map_free also lets them correspond one-to-one.
#pragma once

#include <cstdint>

#include "vacc/tir/func.h"
#include "vacc/tir/node.h"

namespace vacc::tir {

bool structural_equal(const Expr &a, const Expr &b, bool map_free = false);
bool structural_equal(const Stmt &a, const Stmt &b, bool map_free = false);
bool structural_equal(const Func &a, const Func &b);

// A hash of f's structure consistent with structural_equal: node kinds, types, constants, loop
// kinds and extents, buffer shapes and scopes; variables and buffers by order of first
// appearance, never by name. Kernel caches key on it.
uint64_t structural_hash(const Func &f);

}  // namespace vacc::tir
