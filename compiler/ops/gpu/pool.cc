// Pooling on the GPU: max and average pooling with one thread per output (the window's loops
// serial in the thread, the padding from bounds checks), global average pooling with one block
// per (n, c) and a tree reduction.
#include "common.h"
#include "vacc/support/error.h"

namespace vacc::ops::gpu {
namespace {

// One thread per output of a 2-D window: reduce(init, value) over the window's cells inside
// the input, then finish(result, cells inside) is stored.
tir::Func window(const std::string &name, const Pool2dShape &p, tir::DataType t, Expr init,
                 const std::function<Expr(Expr, Expr)> &combine,
                 const std::function<Expr(Expr, Expr)> &finish) {
  using namespace tir;
  const int64_t oh = p.out_h(), ow = p.out_w();
  if (oh <= 0 || ow <= 0) fail("GPU {}: the window does not fit the input", name);
  Buffer x = make_buffer("x", t, {p.n, p.c, p.h, p.w});
  Buffer y = make_buffer("y", t, {p.n, p.c, oh, ow});
  Buffer acc = make_buffer("acc", t, {1}, Scope::kLocal);
  Buffer cells = make_buffer("cells", int32(), {1}, Scope::kLocal);
  Stmt body = flat_loops(p.n * p.c * oh * ow, [&](Expr i) {
    const int OW = static_cast<int>(ow), OH = static_cast<int>(oh);
    Expr plane = i / (OW * OH), r = (i / OW) % OH, col = i % OW;
    Var kh = make_var("kh"), kw = make_var("kw");
    Expr yy = r * static_cast<int>(p.stride_h) + kh - static_cast<int>(p.pad_top);
    Expr xx = col * static_cast<int>(p.stride_w) + kw - static_cast<int>(p.pad_left);
    Expr inside = yy >= 0 && yy < static_cast<int>(p.h) && xx >= 0 && xx < static_cast<int>(p.w);
    Expr n = plane / static_cast<int>(p.c), c = plane % static_cast<int>(p.c);
    Stmt cell = IfThenElse::make(
        inside, Seq::make({Store::make(acc, {0}, combine(load(acc, {0}), load(x, {n, c, yy, xx}))),
                           Store::make(cells, {0}, load(cells, {0}) + 1)}));
    Stmt loops = For::make(kh, p.kh, ForKind::kSerial, For::make(kw, p.kw, ForKind::kSerial, cell));
    return Allocate::make(
        acc,
        Allocate::make(
            cells,
            Seq::make({Store::make(acc, {0}, init), Store::make(cells, {0}, 0), loops,
                       Store::make(y, {n, c, r, col}, finish(load(acc, {0}), load(cells, {0})))})));
  });
  return Func{name, {x, y}, body};
}

}  // namespace

tir::Func max_pool2d(const Pool2dShape &p, tir::DataType t) {
  Expr lowest = t.is_float() ? tir::FloatImm::make(t, -INFINITY)
                             : tir::make_const(t, -(int64_t{1} << (t.bits - 1)));
  return window(
      "max_pool2d", p, t, lowest, [](Expr a, Expr b) { return tir::max(a, b); },
      [](Expr v, Expr) { return v; });
}

tir::Func avg_pool2d(const Pool2dShape &p, bool count_include_pad) {
  const double full = static_cast<double>(p.kh * p.kw);
  return window(
      "avg_pool2d", p, tir::float32(), f32(0), [](Expr a, Expr b) { return a + b; },
      [&](Expr v, Expr cells) {
        return count_include_pad ? v / f32(full) : v / tir::cast(tir::float32(), cells);
      });
}

tir::Func global_avg_pool(int64_t n, int64_t c, int64_t hw) {
  using namespace tir;
  Buffer x = make_buffer("x", float32(), {n * c, hw});
  Buffer y = make_buffer("y", float32(), {n * c});
  const int64_t threads = reduction_threads(hw);
  Buffer red = make_buffer("red", float32(), {threads}, Scope::kShared);
  Var row = make_var("row"), t = make_var("t");
  Stmt reduce = block_reduce(
      red, threads, hw, f32(0), [](Expr a, Expr b) { return a + b; },
      [&](Expr i) {
        return load(x, {row, i});
      });
  Stmt store = For::make(t, 1, ForKind::kThreadX,
                         Store::make(y, {row}, load(red, {0}) / f32(static_cast<double>(hw))));
  Stmt body =
      For::make(row, n * c, ForKind::kBlockX, Allocate::make(red, Seq::make({reduce, store})));
  return Func{"global_avg_pool", {x, y}, body};
}

}  // namespace vacc::ops::gpu
