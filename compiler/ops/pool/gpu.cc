// Pooling on the GPU: max and average pooling with one thread per output (the window's loops
// serial in the thread, the padding from bounds checks), global average pooling with one block
// per (n, c) and a tree reduction.
#include "graph/window.h"
#include "ops/gpu/common.h"
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

namespace {

// ONNX window attributes on a 2-D input, as a Pool2dShape; "" or the reason it does not fit.
std::string pool_shape(const Node &node, const graph::Shape &x, const std::vector<int64_t> &k,
                       Pool2dShape *p) {
  for (int64_t d : node.attrs.get_ints("dilations", {}))
    if (d != 1) return "dilations";
  graph::Window w =
      graph::make_window(node.attrs, {x[2], x[3]}, k, node.attrs.get_int("ceil_mode", 0) != 0);
  *p = Pool2dShape{x[0],        x[1],        x[2],           x[3],           k[0], k[1],
                   w.stride[0], w.stride[1], w.pad_begin[0], w.pad_begin[1], 0,    0};
  // Bottom/right padding that gives the window's output count (ceil_mode included); padded
  // cells never count, so extra padding changes nothing else.
  p->pad_bottom = std::max<int64_t>(0, (w.out[0] - 1) * w.stride[0] + k[0] - x[2] - w.pad_begin[0]);
  p->pad_right = std::max<int64_t>(0, (w.out[1] - 1) * w.stride[1] + k[1] - x[3] - w.pad_begin[1]);
  if (p->out_h() != w.out[0] || p->out_w() != w.out[1]) return "this window geometry";
  return "";
}

std::string pool_node(const Node &node, GpuNodeKernel *k) {
  const graph::Value &x = *node.inputs.at(0);
  if (x.rank() != 4) return "a rank-" + std::to_string(x.rank()) + " input (2-D only)";
  if (node.outputs.size() > 1 && node.outputs[1]) return "the Indices output";
  std::vector<int64_t> ks = node.attrs.get_ints("kernel_shape", {});
  if (ks.size() != 2) return "a kernel that is not 2-D";
  Pool2dShape p;
  std::string why = pool_shape(node, x.shape, ks, &p);
  if (!why.empty()) return why;
  bool include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
  if (node.op == OpKind::kAveragePool && include_pad && node.attrs.get_int("ceil_mode", 0) != 0)
    return "count_include_pad with ceil_mode";
  k->func = node.op == OpKind::kMaxPool ? max_pool2d(p) : avg_pool2d(p, include_pad);
  return "";
}

std::string global_pool_node(const Node &node, GpuNodeKernel *k) {
  const graph::Value &x = *node.inputs.at(0);
  if (x.rank() < 3) return "an input of rank below 3";
  k->func = global_avg_pool(x.shape[0], x.shape[1],
                            graph::num_elements(x.shape) / (x.shape[0] * x.shape[1]));
  return "";
}

}  // namespace

void add_pool_node_kernels(std::vector<GpuLowering> &lowerings) {
  lowerings.push_back({OpKind::kMaxPool, pool_node});
  lowerings.push_back({OpKind::kAveragePool, pool_node});
  lowerings.push_back({OpKind::kGlobalAveragePool, global_pool_node});
}

}  // namespace vacc::ops::gpu
