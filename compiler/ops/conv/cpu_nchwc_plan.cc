#include "ops/conv/cpu_nchwc_plan.h"

#include <algorithm>
#include <vector>

#include "graph/window.h"
#include "vacc/codegen/cpu/thread_pool.h"

namespace vacc::ops::cpu {

ConvGeometry conv_geometry(const Node &node, int64_t block) {
  const graph::Value &xv = *node.inputs[0], &wv = *node.inputs[1];
  ConvGeometry g;
  g.B = block;
  g.in_block = xv.layout.blocked ? block : 1;
  const int64_t group = node.attrs.get_int("group", 1);
  g.N = xv.shape[0];
  g.C = wv.shape[1] * group;
  g.group = group;
  g.M = wv.shape[0];
  g.H = xv.shape[2];
  g.W = xv.shape[3];
  g.KH = wv.shape[2];
  g.KW = wv.shape[3];
  const graph::Window w = graph::make_window(node.attrs, {g.H, g.W}, {g.KH, g.KW}, false);
  g.OH = w.out[0];
  g.OW = w.out[1];
  g.sh = w.stride[0];
  g.sw = w.stride[1];
  g.dh = w.dilation[0];
  g.dw = w.dilation[1];
  g.ph = w.pad_begin[0];
  g.pw = w.pad_begin[1];
  g.flat = g.KH == 1 && g.KW == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 &&
           g.OH == g.H && g.OW == g.W && g.OW <= 16;
  return g;
}

Registers registers(int64_t block) {
  const int64_t lanes = native_lanes(tir::float32());
  Registers r;
  r.count = lanes >= 16 ? 32 : 16;
  r.per_block = std::max<int64_t>(1, block / lanes);
  return r;
}

namespace {

// Cycles of one reduction step (one input channel, kernel row and column) over a row of
// `width` columns in tiles of `columns`.
double row_step_cycles(int64_t blocks, int64_t columns, int64_t width) {
  return static_cast<double>(width / columns) * tile_step_cycles(blocks, columns) +
         (width % columns ? tile_step_cycles(blocks, width % columns) : 0.0);
}

// The cheapest number of columns for tiles of `blocks` output blocks (0: none fits).
int64_t best_columns(const ConvGeometry &g, const Registers &regs, int64_t blocks) {
  const int64_t width = g.row_width();
  int64_t best = 0;
  double best_cost = -1;
  for (int64_t r = 1; r <= std::min<int64_t>(width, 28); ++r) {
    if (blocks * r * regs.per_block > regs.count * 3 / 4) break;
    const double cost = row_step_cycles(blocks, r, width);
    if (best_cost < 0 || cost < best_cost - 1e-9) {
      best_cost = cost;
      best = r;
    }
  }
  return best;
}

// The tile heights (output blocks) a tile may take: divisors of a group's blocks, up to 6.
std::vector<int64_t> tile_blocks(const ConvGeometry &g) {
  const int64_t blocks = g.blocks_out() / g.group;
  std::vector<int64_t> v;
  for (int64_t mv = 1; mv <= std::min<int64_t>(blocks, 6); ++mv)
    if (blocks % mv == 0) v.push_back(mv);
  return v;
}

// Bytes a core reads per cycle from its L2 cache, for the cost of a task's weights.
constexpr double kL2BytesPerCycle = 32;

// The estimated cycles of the plan on `threads` threads: each task costs its rows' reduction
// steps and one read of its channel tile's weights; the tasks go in the pool's chunks
// (codegen::cpu::parallel_chunk_bounds), each to the thread that is free first.
double pool_cycles(const DensePlan &p, int threads) {
  const ConvGeometry &g = p.geometry;
  const int64_t rows = g.rows(), row_blocks = (rows + p.block_rows - 1) / p.block_rows;
  const double row = row_step_cycles(p.tile.blocks, p.tile.columns, g.row_width()) *
                     static_cast<double>(g.group_in() * g.KH * g.KW);
  const double weights =
      static_cast<double>(g.group_in() * g.KH * g.KW * p.tile.blocks * g.B * 4) / kL2BytesPerCycle;
  const int64_t tasks = p.tasks();
  auto task_cycles = [&](int64_t t) {
    const int64_t first = t % row_blocks * p.block_rows;
    return static_cast<double>(std::min(p.block_rows, rows - first)) * row + weights;
  };
  const std::vector<int64_t> bounds = codegen::cpu::parallel_chunk_bounds(tasks, threads);
  std::vector<double> free_at(static_cast<size_t>(threads), 0.0);
  for (size_t c = 0; c + 1 < bounds.size(); ++c) {
    double cycles = 0;
    for (int64_t t = bounds[c]; t < bounds[c + 1]; ++t) cycles += task_cycles(t);
    *std::min_element(free_at.begin(), free_at.end()) += cycles;
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

}  // namespace

DenseTile choose_dense_tile(const ConvGeometry &g) {
  const Registers regs = registers(g.B);
  DenseTile best;
  double best_cost = -1;
  for (int64_t mv : tile_blocks(g)) {
    const int64_t r = best_columns(g, regs, mv);
    if (r == 0) break;
    const double cost =
        static_cast<double>(g.blocks_out() / mv) * row_step_cycles(mv, r, g.row_width());
    if (best_cost < 0 || cost < best_cost - 1e-9) {
      best_cost = cost;
      best = {mv, r};
    }
  }
  return best;
}

int64_t DensePlan::tasks() const {
  return geometry.N * geometry.blocks_out() / tile.blocks *
         ((geometry.rows() + block_rows - 1) / block_rows);
}

DensePlan plan_dense(const ConvGeometry &g, int threads) {
  DensePlan best{g, choose_dense_tile(g), std::min<int64_t>(g.rows(), 8)};
  if (threads <= 1) return best;
  // Another plan must be clearly faster: the estimate ignores what fewer, longer tasks save
  // besides their weights (loop and partial-sum overheads).
  double best_cycles = pool_cycles(best, threads);
  std::vector<ConvGeometry> shapes = {g};
  for (int64_t d = 2; g.flat && d <= g.OH * g.OW; ++d) {
    if (g.OH * g.OW % d != 0) continue;
    shapes.push_back(g);
    shapes.back().flat_rows = d;
  }
  const Registers regs = registers(g.B);
  for (const ConvGeometry &s : shapes)
    for (int64_t mv : tile_blocks(s)) {
      const int64_t r = best_columns(s, regs, mv);
      if (r == 0) break;
      for (int64_t br = std::min<int64_t>(s.rows(), 8); br >= 1; --br) {
        const DensePlan p{s, {mv, r}, br};
        const double cycles = pool_cycles(p, threads);
        if (cycles < 0.97 * best_cycles) {
          best = p;
          best_cycles = cycles;
        }
      }
    }
  return best;
}

}  // namespace vacc::ops::cpu
