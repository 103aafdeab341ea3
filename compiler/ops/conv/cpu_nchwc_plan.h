// The plan of a float convolution on the blocked layout (cpu_nchwc.cc): its geometry, the
// register tile of a dense convolution and how its output is cut into the thread pool's
// parallel tasks. Private to compiler/ops/cpu.
#pragma once

#include <cstdint>

#include "ops/cpu/common.h"
#include "ops/cpu/row_tiles.h"

namespace vacc::ops::cpu {

// The geometry of one convolution, with its output rows as the kernel walks them: a narrow
// pointwise stride-1 convolution reads its whole image as one flat row, or, to give more
// threads a share, as `flat_rows` rows of equal width.
struct ConvGeometry {
  int64_t N = 1, C = 1, M = 1, H = 1, W = 1, OH = 1, OW = 1, KH = 1, KW = 1;
  // Groups of whole blocks: each group's M/group outputs read its C/group inputs only.
  int64_t group = 1;
  int64_t B = 16;        // channels per block of the output (the layout's)
  int64_t in_block = 1;  // channels per block of the input: B, or 1 when it is plain
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  bool flat = false;
  int64_t flat_rows = 1;  // divides OH * OW
  int64_t rows() const { return flat ? flat_rows : OH; }
  int64_t row_width() const { return flat ? OH * OW / flat_rows : OW; }
  int64_t blocks_out() const { return (M + B - 1) / B; }
  int64_t group_in() const { return C / group; }  // the channels one output reduces over
  RowWindow columns() const {
    if (flat) return {row_width(), row_width(), 1, 1, 1, 0};
    return {OW, W, KW, sw, dw, pw};
  }
  // Whether some kernel row of some output row reads outside the input.
  bool rows_reach_out() const {
    return !flat && (ph > 0 || (OH - 1) * sh + (KH - 1) * dh - ph >= H);
  }
};

ConvGeometry conv_geometry(const Node &node, int64_t block);

// Vector registers of the target, and how many one block of B floats takes.
struct Registers {
  int64_t count = 32, per_block = 1;
};
Registers registers(int64_t block);

// The dense tile: `blocks` output channel blocks x `columns` output columns of one row.
struct DenseTile {
  int64_t blocks = 1, columns = 1;
};

// The tile the cost model of one core finds cheapest for a row, among the shapes whose
// accumulators take at most three quarters of the registers (the weight vectors, broadcasts
// and LLVM's own values use the rest; more spills).
DenseTile choose_dense_tile(const ConvGeometry &g);

// A dense convolution's plan: its geometry (a flat image's rows), its tile and its parallel
// tasks, each an (image, channel tile, block of `block_rows` rows).
struct DensePlan {
  ConvGeometry geometry;
  DenseTile tile;
  int64_t block_rows = 1;
  int64_t tasks() const;
};

// The plan for `threads` threads. One thread: the cheapest tile, blocks of up to 8 rows (a
// chunk's weights serve them all from the L1 cache) and a flat image as one row. More: the
// plan whose estimated time on the thread pool (its tasks' cycles, each with its weights read
// once, dealt out in the pool's chunks) is least, so that no thread waits while another runs a
// last long task; a flat image may be cut into rows and blocks may hold fewer rows.
DensePlan plan_dense(const ConvGeometry &g, int threads);

}  // namespace vacc::ops::cpu
