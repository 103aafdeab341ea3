// vacc.ConvNCHWc on the CPU: float 2-D convolutions on the blocked layout (graph/passes/
// block_cpu_layout.h), written directly as loop IR.
//
// Dense (one group): a register tile of `blocks` output channel blocks (each one vector of B
// channels) x R output columns of one row. For each input channel, kernel row and kernel column
// the tile takes `blocks` weight vectors and R broadcast inputs: blocks x R fused multiply-adds,
// the weights packed once at kernel build time into panels [M/(blocks*B), C/B, KH, KW, B,
// blocks*B] in the order the reduction reads them (ONNX Runtime's NCHWc kernels and oneDNN
// prepack alike). The output stage adds the bias and the fused sum, clamps to the fused
// activation and stores each block's B channels as one contiguous vector.
//
// Depthwise (group = C = M): a tile of R columns of one channel block; every tap is one vector
// of inputs times one vector of weights, so the channels fill the vectors whatever the stride.
//
// Padding is inside the kernel (row_tiles.h): kernel rows outside the input are skipped by a
// test per row, kernel columns outside it are never emitted for the tiles at the edges; no
// padded copy of the input is made. The tile shape comes from a small cost model of the core
// (two FMAs and two loads per cycle, 32 vector registers with AVX-512), and the dense kernels'
// parallel tasks from its estimate on the thread pool (conv_nchwc_plan.h).
#include <cstring>

#include "ops/conv/cpu_nchwc_plan.h"
#include "ops/cpu/common.h"
#include "ops/cpu/row_tiles.h"
#include "vacc/codegen/cpu/thread_pool.h"
#include "vacc/support/error.h"
#include "vacc/tir/node.h"

namespace vacc::ops::cpu {

namespace {

using tir::Buffer;
using tir::ForKind;
using tir::Stmt;
using tir::Var;

// What both kernels share: the parameters, the parallel loop over rows and the output stage.
class ConvKernel {
 public:
  ConvKernel(const Node &node, ConvGeometry g) : node_(node), g_(std::move(g)) {}
  const ConvGeometry &geometry() const { return g_; }

  // Parameters, in the executor's order: one per present node input (the weights and the
  // bias, replaced by packed constants, as unused placeholders), then the constants, then y.
  void declare(const std::vector<int64_t> &x_shape) {
    const int64_t rows = g_.rows(), width = g_.row_width();
    x_ = tir::make_buffer("x", tir::float32(), x_shape);
    const std::vector<int64_t> y_shape = {g_.N, g_.blocks_out(), rows, width, g_.B};
    y_ = tir::make_buffer("y", tir::float32(), y_shape);
    params_ = {x_, tir::make_buffer("w_unused", tir::int8(), {1})};
    if (node_.input(2)) params_.push_back(tir::make_buffer("b_unused", tir::int8(), {1}));
    if (node_.input(3)) {
      sum_ = tir::make_buffer("sum", tir::float32(), y_shape);
      params_.push_back(sum_);
    }
  }

  Buffer constant(const std::string &name, graph::Tensor value) {
    Buffer b = tir::make_buffer(name, tir::float32(), value.shape());
    constant_params_.push_back(b);
    constants_.push_back(std::move(value));
    return b;
  }

  // The bias padded with zeros to whole blocks.
  void declare_bias() {
    graph::Tensor padded(graph::DType::kFloat32, {g_.blocks_out() * g_.B});
    std::memset(padded.raw(), 0, padded.nbytes());
    if (const graph::Value *b = node_.input(2)) {
      if (!b->is_constant())
        KernelBuilder(node_).unsupported("a computed bias (it must be a constant)");
      std::memcpy(padded.raw(), b->constant->raw(), b->constant->nbytes());
    }
    bias_ = constant("bias", std::move(padded));
  }

  const Buffer &x() const { return x_; }
  Expr n() const { return n_; }
  Expr oh() const { return oh_; }
  // The image and output row the statements built next are for.
  void set_position(Expr n, Expr oh) {
    n_ = std::move(n);
    oh_ = std::move(oh);
  }
  // The row of the output (and, pointwise, of the input) the statements built next are for: 0
  // for a flat image read as one row.
  Expr row() const { return g_.flat && g_.flat_rows == 1 ? Expr(0) : oh_; }

  // The parallel loop over (image, channel tile, row): `row(tile)` builds one row of one tile.
  // Consecutive rows of a channel tile run together and share its weights in the cache.
  Stmt parallel_rows(int64_t tiles, const std::function<Stmt(const Expr &tile)> &row) {
    Var p = tir::make_var("p");
    const int64_t rows = g_.rows();
    n_ = Expr(p) / to_int(tiles * rows);
    oh_ = Expr(p) % to_int(rows);
    const Stmt body = row(Expr(p) / to_int(rows) % to_int(tiles));
    return tir::For::make(p, g_.N * tiles * rows, ForKind::kParallel, body);
  }

  // y[n, block, oh, col, :] = act(acc[r, acc_block*B + :] + bias + sum).
  Stmt store(const Buffer &acc, int64_t r, int64_t acc_block, const Expr &block,
             const Expr &col) const {
    Var v = tir::make_var("v");
    const std::vector<Expr> at = {n_, block, row(), col, v};
    Expr value = tir::load(acc, {to_int(r), Expr(v) + to_int(acc_block * g_.B)});
    value = value + tir::load(bias_, {block * to_int(g_.B) + v});
    if (sum_) value = value + tir::load(sum_, at);
    return tir::For::make(v, g_.B, ForKind::kVectorized,
                          tir::Store::make(y_, at, fused_activation(node_, value)));
  }

  // y[n, block, oh, col, :] = acc[r, acc_block*B + :]: a partial sum, finished later.
  Stmt store_partial(const Buffer &acc, int64_t r, int64_t acc_block, const Expr &block,
                     const Expr &col) const {
    Var v = tir::make_var("v");
    return tir::For::make(
        v, g_.B, ForKind::kVectorized,
        tir::Store::make(y_, {n_, block, row(), col, v},
                         tir::load(acc, {to_int(r), Expr(v) + to_int(acc_block * g_.B)})));
  }

  // acc[r, acc_block*B + :] = y[n, block, oh, col, :]: a partial sum resumed.
  Stmt resume(const Buffer &acc, int64_t r, int64_t acc_block, const Expr &block,
              const Expr &col) const {
    Var v = tir::make_var("v");
    return tir::For::make(v, g_.B, ForKind::kVectorized,
                          tir::Store::make(acc, {to_int(r), Expr(v) + to_int(acc_block * g_.B)},
                                           tir::load(y_, {n_, block, row(), col, v})));
  }

  // acc[r, block*B + :] += value(v), one vector of B lanes (an undefined value: = 0).
  Stmt accumulate(const Buffer &acc, int64_t r, int64_t block,
                  const std::function<Expr(const Var &v)> &value) const {
    Var v = tir::make_var("v");
    const std::vector<Expr> at = {to_int(r), Expr(v) + to_int(block * g_.B)};
    const Expr add = value(v);
    return tir::For::make(
        v, g_.B, ForKind::kVectorized,
        tir::Store::make(acc, at,
                         add.defined() ? tir::load(acc, at) + add : fconst(tir::float32(), 0)));
  }

  // acc[r, :] = 0 for every column, one vector of B lanes at a time.
  Stmt clear(const Buffer &acc, int64_t width, int64_t blocks) const {
    std::vector<Stmt> s;
    for (int64_t r = 0; r < width; ++r)
      for (int64_t j = 0; j < blocks; ++j)
        s.push_back(accumulate(acc, r, j, [&](const Var &) { return Expr(); }));
    return tir::Seq::make(s);
  }

  // `body` for kernel row kh, skipped where input row ih = oh*sh + kh*dh - ph is outside.
  Stmt guard_row(const Expr &kh, const std::function<Stmt(const Expr &ih)> &body) const {
    if (g_.flat) return body(row());
    const Expr ih = oh_ * to_int(g_.sh) + kh * to_int(g_.dh) - to_int(g_.ph);
    if (!g_.rows_reach_out()) return body(ih);
    return tir::IfThenElse::make(ih >= 0 && ih < to_int(g_.H), body(ih));
  }

  // Input column of output column `col` for kernel column kw, in col's (64-bit) type.
  Expr input_column(const Expr &col, const Expr &kw) const {
    if (g_.flat) return col;
    return col * to_int(g_.sw) + tir::cast(col.dtype(), kw) * to_int(g_.dw) - to_int(g_.pw);
  }

  CpuKernel finish(const std::string &name, const Stmt &body) {
    CpuKernel k;
    std::vector<Buffer> params = params_;
    params.insert(params.end(), constant_params_.begin(), constant_params_.end());
    params.push_back(y_);
    k.func = tir::Func{name, params, body};
    k.constants = std::move(constants_);
    return k;
  }

 private:
  const Node &node_;
  ConvGeometry g_;
  Buffer x_, y_, sum_, bias_;
  std::vector<Buffer> params_, constant_params_;
  std::vector<graph::Tensor> constants_;
  Expr n_, oh_;
};

// Panels [MB/mv, CBx, KH, KW, Bx, mv*B] of the OIHW weights w, zero past M and C (with
// groups: CBx blocks of one group's inputs, those of the tile's group).
graph::Tensor dense_panels(const graph::Tensor &w, const ConvGeometry &g, int64_t mv) {
  const int64_t C = g.group_in();
  const int64_t V = mv * g.B, Bx = g.in_block, CBx = (C + Bx - 1) / Bx;
  const int64_t tiles = g.blocks_out() / mv;
  graph::Tensor p(graph::DType::kFloat32, {tiles, CBx, g.KH, g.KW, Bx, V});
  std::memset(p.raw(), 0, p.nbytes());
  const float *s = w.data<float>();
  float *d = p.data<float>();
  for (int64_t m = 0; m < g.M; ++m)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t kh = 0; kh < g.KH; ++kh)
        for (int64_t kw = 0; kw < g.KW; ++kw)
          d[((((m / V * CBx + c / Bx) * g.KH + kh) * g.KW + kw) * Bx + c % Bx) * V + m % V] =
              s[((m * C + c) * g.KH + kh) * g.KW + kw];
  return p;
}

// Whether a phase of the reduction holds: never, always, or when `cond` does (at run time).
struct When {
  int kind = 0;  // 0 never, 1 always, 2 cond
  Expr cond;
  static When never() { return {}; }
  static When always() { return {1, Expr()}; }
  static When at(Expr c) { return {2, std::move(c)}; }
  Stmt pick(const Stmt &then_case, const Stmt &else_case) const {
    if (kind == 1) return then_case;
    if (kind == 0) return else_case;
    return tir::IfThenElse::make(cond, then_case, else_case);
  }
};

// Input channel blocks per chunk of the reduction: the most (dividing the whole blocks) whose
// weights for one channel tile stay within 32 KiB, so that they are read from the L1 cache
// for every row of a task rather than streamed from L2 (ONNX Runtime's NCHWc kernels walk the
// input channel blocks outermost too, accumulating into the output).
int64_t chunk_blocks(const ConvGeometry &g, int64_t full_blocks, int64_t mv) {
  const int64_t bytes_per_block = g.in_block * g.KH * g.KW * mv * g.B * 4;
  int64_t kc = std::max<int64_t>(1, std::min<int64_t>(full_blocks, (32 << 10) / bytes_per_block));
  while (full_blocks > 0 && full_blocks % kc != 0) --kc;
  return kc;
}

CpuKernel build_dense(const Node &node, int64_t block) {
  const DensePlan plan = plan_dense(conv_geometry(node, block), codegen::cpu::num_threads());
  ConvKernel k(node, plan.geometry);
  const ConvGeometry &g = k.geometry();
  const DenseTile tile = plan.tile;
  // CBx: the input channel blocks one output reads (its group's); XB: all of them.
  const int64_t mv = tile.blocks, Bx = g.in_block, CBx = (g.group_in() + Bx - 1) / Bx;
  const int64_t XB = (g.C + Bx - 1) / Bx;
  // The input as [N, C/Bx, H, W, Bx] (a plain input is its own blocking with Bx = 1).
  k.declare(g.flat ? std::vector<int64_t>{g.N, XB, g.rows(), g.row_width(), Bx}
                   : std::vector<int64_t>{g.N, XB, g.H, g.W, Bx});
  const Buffer panels = k.constant("w_panels", dense_panels(*node.inputs[1]->constant, g, mv));
  k.declare_bias();
  const RowWindow cols = g.columns();
  const std::vector<TileRun> runs = plan_row_tiles(cols, tile.columns);
  const int64_t full_blocks = g.group_in() / Bx, tail = g.group_in() % Bx;
  const int64_t kc = chunk_blocks(g, full_blocks, mv), chunks = full_blocks / kc;
  const int64_t rows = g.rows(), block_rows = plan.block_rows;
  const int64_t tiles = g.blocks_out() / mv, row_blocks = (rows + block_rows - 1) / block_rows;
  Var p = tir::make_var("p"), rr = tir::make_var("r");

  // The weights of the next chunk (the next kc input channel blocks of the panels, which
  // follow in memory: the next chunk of this tile, or the first of the next tile) are fetched
  // into the cache while this chunk runs, so that the weights of a layer larger than the
  // caches do not wait on memory at every chunk. The fetches are spread over the chunk's
  // kernel rows, `per_step` lines before each kernel row of each row's first tile: a row's
  // share issued at once left ResNet-18's layer4 10-20 % slower (most likely waiting on the
  // core's few line fill buffers ahead of the multiply-adds' loads); the row's other tiles
  // would only fetch the same lines again.
  const int64_t chunk_floats = kc * g.KH * g.KW * Bx * mv * g.B, line_floats = 16;
  const int64_t lines = (chunk_floats + line_floats - 1) / line_floats;
  const int64_t steps = block_rows * kc * g.KH, per_step = (lines + steps - 1) / steps;
  // Before kernel row kh of the chunk's block b in row rr of the task: that step's lines.
  auto prefetch_step = [&](const Expr &mt, const Expr &cb0, const Expr &b, const Expr &kh) {
    const Expr next = cb0 + to_int(kc);
    Var i = tir::make_var("line");
    const Expr line = ((Expr(rr) * to_int(kc) + b) * to_int(g.KH) + kh) * to_int(per_step) + i;
    const Expr offset = line * to_int(line_floats);
    Stmt fetch = tir::Prefetch::make(panels, {mt, next, to_int(0), to_int(0), to_int(0), offset});
    if (per_step * steps > lines)
      fetch = tir::IfThenElse::make(offset < to_int(chunk_floats), fetch);
    const Expr exists = mt * to_int(CBx) + next < to_int(tiles * CBx);
    return tir::IfThenElse::make(exists, tir::For::make(i, per_step, ForKind::kSerial, fetch));
  };
  // Whether any task has a next chunk to fetch.
  const bool fetches = chunks * tiles > 1;

  // One pass over the task's rows for the input channel blocks [cb0, cb0 + blocks) (`lanes`
  // channels of each): the register tile starts from zero on the first pass, else from the
  // partial sums in y, and ends in y, finished (bias, sum, activation) on the last pass.
  auto pass = [&](const Expr &mt, const Expr &cb0, int64_t blocks, int64_t lanes, When first,
                  When last, bool prefetch) {
    // The first input block of the tile's group (tiles never straddle groups).
    const int64_t group_blocks = g.blocks_out() / g.group;
    const Expr group_base =
        g.group > 1 ? mt * to_int(mv) / to_int(group_blocks) * to_int(CBx) : Expr();
    return emit_row_tiles(cols, runs, [&](const auto &col, int64_t width, const auto &inside) {
      const Buffer acc =
          tir::make_buffer("acc", tir::float32(), {width, mv * g.B}, tir::Scope::kLocal);
      // Kernel row kh of input channel block cb: per kernel column a loop over the block's
      // channels whose body is the tile's blocks x R multiply-adds, one broadcast input per
      // column and one weight vector per block (the register tile stays the only long-lived
      // state; kernel columns are not unrolled into one body, where broadcasts shared between
      // them would outlive the registers).
      // The multiply-adds of kernel column kw (an Expr: a loop variable or a constant) for
      // input channel ci of block cb, over the tile's columns that read inside the input.
      auto column_fmas = [&](const Expr &cb, const Expr &kh, const Expr &ih, const Expr &kw,
                             const Expr &ci, const std::function<bool(int64_t r)> &valid) {
        std::vector<Stmt> fmas;
        for (int64_t r = 0; r < width; ++r) {
          if (!valid(r)) continue;
          const Expr xv = tir::load(k.x(), {k.n(), group_base.defined() ? cb + group_base : cb, ih,
                                            k.input_column(col(r), kw), ci});
          for (int64_t j = 0; j < mv; ++j)
            fmas.push_back(k.accumulate(acc, r, j, [&](const Var &v) {
              return xv * tir::load(panels, {mt, cb, kh, kw, ci, Expr(v) + to_int(j * g.B)});
            }));
        }
        return fmas;
      };
      auto kernel_row = [&](const Expr &cb, const Expr &kh, const Expr &ih) {
        bool all_inside = true;
        for (int64_t kw = 0; kw < g.KW; ++kw)
          for (int64_t r = 0; r < width; ++r) all_inside = all_inside && inside(r, kw);
        // With few channels per block (a plain image's), the channel loops are too short to
        // keep unrolled kernel columns apart: LLVM merges them and shares the broadcasts
        // between columns, which outlive the registers. Interior tiles then loop over the
        // kernel columns instead.
        if (all_inside && lanes < 4 && g.KW > 1) {
          Var kw = tir::make_var("kw", tir::int64()), ci = tir::make_var("ci");
          const Stmt body =
              tir::Seq::make(column_fmas(cb, kh, ih, kw, ci, [](int64_t) { return true; }));
          return tir::For::make(kw, g.KW, ForKind::kSerial,
                                tir::For::make(ci, lanes, ForKind::kSerial, body));
        }
        std::vector<Stmt> s;
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          Var ci = tir::make_var("ci");
          const std::vector<Stmt> fmas =
              column_fmas(cb, kh, ih, to_int(kw), ci, [&](int64_t r) { return inside(r, kw); });
          if (!fmas.empty())
            s.push_back(tir::For::make(ci, lanes, ForKind::kSerial, tir::Seq::make(fmas)));
        }
        return tir::Seq::make(s);
      };
      Var b = tir::make_var("cb"), kh = tir::make_var("kh");
      const Expr cb = blocks > 1 ? cb0 + b : cb0;
      Stmt kh_body = k.guard_row(kh, [&](const Expr &ih) { return kernel_row(cb, kh, ih); });
      if (prefetch) {
        const Expr c0 = col(0);  // a constant but in the loop over the interior tiles
        const Stmt fetch = prefetch_step(mt, cb0, blocks > 1 ? Expr(b) : to_int(0), kh);
        kh_body = tir::Seq::make(
            {tir::IfThenElse::make(tir::eq(c0, tir::cast(c0.dtype(), to_int(0))), fetch), kh_body});
      }
      Stmt reduce = tir::For::make(kh, g.KH, ForKind::kSerial, kh_body);
      if (blocks > 1) reduce = tir::For::make(b, blocks, ForKind::kSerial, reduce);
      std::vector<Stmt> start, finish, partial;
      for (int64_t r = 0; r < width; ++r)
        for (int64_t j = 0; j < mv; ++j) {
          const Expr ob = mt * to_int(mv) + to_int(j);
          start.push_back(k.resume(acc, r, j, ob, col(r)));
          finish.push_back(k.store(acc, r, j, ob, col(r)));
          partial.push_back(k.store_partial(acc, r, j, ob, col(r)));
        }
      return tir::Allocate::make(
          acc, tir::Seq::make({first.pick(k.clear(acc, width, mv), tir::Seq::make(start)), reduce,
                               last.pick(tir::Seq::make(finish), tir::Seq::make(partial))}));
    });
  };

  // Tasks: (image, channel tile, block of rows); within a task the input channels go in
  // chunks, each over all the task's rows, so that a chunk's weights serve every row.
  const Expr mt = Expr(p) / to_int(row_blocks) % to_int(tiles);
  const Expr oh = Expr(p) % to_int(row_blocks) * to_int(block_rows) + rr;
  k.set_position(Expr(p) / to_int(row_blocks * tiles), oh);
  auto over_rows = [&](const Stmt &row) {
    return tir::For::make(rr, block_rows, ForKind::kSerial,
                          rows % block_rows ? tir::IfThenElse::make(oh < to_int(rows), row) : row);
  };
  std::vector<Stmt> task;
  if (chunks > 0) {
    Var q = tir::make_var("chunk");
    const When first = chunks == 1 ? When::always() : When::at(tir::eq(q, 0));
    const When last = tail > 0      ? When::never()
                      : chunks == 1 ? When::always()
                                    : When::at(tir::eq(q, to_int(chunks - 1)));
    task.push_back(
        tir::For::make(q, chunks, ForKind::kSerial,
                       over_rows(pass(mt, Expr(q) * to_int(kc), kc, Bx, first, last, fetches))));
  }
  if (tail > 0)
    task.push_back(
        over_rows(pass(mt, to_int(full_blocks), 1, tail,
                       chunks > 0 ? When::never() : When::always(), When::always(), false)));
  const Stmt body =
      tir::For::make(p, g.N * tiles * row_blocks, ForKind::kParallel, tir::Seq::make(task));
  return k.finish("ConvNCHWc", body);
}

// Depthwise weights [C/B, KH, KW, B], zero past C.
graph::Tensor depthwise_weights(const graph::Tensor &w, const ConvGeometry &g) {
  const int64_t CB = g.blocks_out();
  graph::Tensor p(graph::DType::kFloat32, {CB, g.KH, g.KW, g.B});
  std::memset(p.raw(), 0, p.nbytes());
  const float *s = w.data<float>();
  float *d = p.data<float>();
  for (int64_t c = 0; c < g.C; ++c)
    for (int64_t k = 0; k < g.KH * g.KW; ++k)
      d[((c / g.B) * g.KH * g.KW + k) * g.B + c % g.B] = s[c * g.KH * g.KW + k];
  return p;
}

CpuKernel build_depthwise(const Node &node, int64_t block) {
  ConvKernel k(node, conv_geometry(node, block));
  const ConvGeometry &g = k.geometry();
  if (g.in_block != g.B) KernelBuilder(node).unsupported("a depthwise kernel on a plain input");
  k.declare({g.N, g.blocks_out(), g.H, g.W, g.B});
  const Buffer wd = k.constant("w_depthwise", depthwise_weights(*node.inputs[1]->constant, g));
  k.declare_bias();
  const Registers regs = registers(g.B);
  // Accumulators, the input vectors of a row of taps and the weights share the registers.
  const int64_t width = std::max<int64_t>(1, (regs.count / regs.per_block - 4) / 3);
  const RowWindow cols = g.columns();
  const std::vector<TileRun> runs = plan_row_tiles(cols, std::min(width, g.row_width()));

  Stmt body = k.parallel_rows(g.blocks_out(), [&](const Expr &cb) {
    return emit_row_tiles(cols, runs, [&](const auto &col, int64_t w, const auto &inside) {
      const Buffer acc = tir::make_buffer("acc", tir::float32(), {w, g.B}, tir::Scope::kLocal);
      Var kh = tir::make_var("kh");
      Stmt taps = k.guard_row(kh, [&](const Expr &ih) {
        std::vector<Stmt> s;
        for (int64_t kw = 0; kw < g.KW; ++kw)
          for (int64_t r = 0; r < w; ++r) {
            if (!inside(r, kw)) continue;
            const Expr iw = k.input_column(col(r), to_int(kw));
            s.push_back(k.accumulate(acc, r, 0, [&](const Var &v) {
              return tir::load(k.x(), {k.n(), cb, ih, iw, v}) *
                     tir::load(wd, {cb, kh, to_int(kw), v});
            }));
          }
        return tir::Seq::make(s);
      });
      std::vector<Stmt> s = {k.clear(acc, w, 1), tir::For::make(kh, g.KH, ForKind::kSerial, taps)};
      for (int64_t r = 0; r < w; ++r) s.push_back(k.store(acc, r, 0, cb, col(r)));
      return tir::Allocate::make(acc, tir::Seq::make(s));
    });
  });
  return k.finish("ConvNCHWc", body);
}

CpuKernel build_conv_nchwc(const Node &node) {
  const graph::Value &wv = *node.inputs.at(1);
  const int64_t block = node.attrs.get_int("block_c");
  const KernelBuilder kb(node);
  if (!wv.is_constant()) kb.unsupported("computed weights (they must be a constant)");
  const int64_t group = node.attrs.get_int("group", 1);
  const int64_t C = wv.shape[1] * group, M = wv.shape[0];
  if (group == 1) return build_dense(node, block);
  if (group == C && M == C) return build_depthwise(node, block);
  if (C / group % block == 0 && M / group % block == 0 && node.inputs[0]->layout.blocked)
    return build_dense(node, block);
  kb.unsupported(
      fmt::format("{} groups of {} input channels (one group, depthwise, or groups of "
                  "whole {}-channel blocks only)",
                  group, C / group, block));
}

}  // namespace

void add_conv_nchwc_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kConvNCHWc, build_conv_nchwc});
}

}  // namespace vacc::ops::cpu
