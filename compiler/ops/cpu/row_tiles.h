// Output rows of a sliding window (convolution, pooling) cut into register tiles of columns,
// with the padding handled inside the kernel instead of by a padded copy of the input: tiles
// whose windows all lie inside the input run in a loop with no checks; the few tiles at the
// edges are emitted one by one at their static columns, where each (column, kernel column)
// pair is known, at kernel build time, to read inside the input or not, and the pairs outside
// are simply not emitted (a zero for a sum, nothing for a max). Private to compiler/ops/cpu.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "vacc/tir/node.h"

namespace vacc::ops::cpu {

// The columns of one output row against the input row: out[c] reads in[c*stride + k*dilation -
// pad] for k in [0, kernel).
struct RowWindow {
  int64_t out = 0, in = 0, kernel = 1, stride = 1, dilation = 1, pad = 0;
  // Whether kernel column k of output column c reads inside the input.
  bool inside(int64_t c, int64_t k) const {
    const int64_t i = c * stride + k * dilation - pad;
    return i >= 0 && i < in;
  }
};

// `count` tiles of `width` columns from column `first`: a loop when `interior` (every window
// inside the input), else one tile (count 1) emitted at its static columns.
struct TileRun {
  int64_t first = 0, count = 1, width = 1;
  bool interior = false;
};

// The runs covering [0, w.out) with tiles of at most `width` columns: edge tiles as wide as
// the tile, the interior as one loop, the remainder in at most two static tiles.
std::vector<TileRun> plan_row_tiles(const RowWindow &w, int64_t width);

// Builds the statement of one tile: column r (of `width`) is output column col(r) (an int64
// expression); `inside(r, k)` says whether its kernel column k reads inside the input
// (constant per run).
using TileBody =
    std::function<tir::Stmt(const std::function<tir::Expr(int64_t r)> &col, int64_t width,
                            const std::function<bool(int64_t r, int64_t k)> &inside)>;

// The runs of one row, in order: interior runs as serial loops over their tiles.
tir::Stmt emit_row_tiles(const RowWindow &w, const std::vector<TileRun> &runs,
                         const TileBody &body);

// Cycles of one reduction step of a tile of `blocks` vectors of channels x `columns` columns
// on a core with two FMA and two load ports: the register tiles' cost model.
double tile_step_cycles(int64_t blocks, int64_t columns);

}  // namespace vacc::ops::cpu
