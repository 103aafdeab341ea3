#include "common.h"

#include "vacc/support/error.h"

namespace vacc::ops::gpu {

Expr f32(double v) {
  return tir::FloatImm::make(tir::float32(), v);
}

void schedule_flat(schedule::Schedule &s, const Tensor &out) {
  schedule::Stage &st = s[out];
  std::vector<te::IterVar> axes = st.axis();
  te::IterVar all = axes[0];
  for (size_t k = 1; k < axes.size(); ++k) all = st.fuse(all, axes[k]);
  auto [bx, tx] = st.split(all, kThreads);
  st.bind(bx, "blockIdx.x");
  st.bind(tx, "threadIdx.x");
}

void cooperative_copy(schedule::Schedule &s, const Tensor &copy) {
  schedule::Stage &st = s[copy];
  te::IterVar f = st.axis()[0];
  for (size_t k = 1; k < st.axis().size(); ++k) f = st.fuse(f, st.axis()[k]);
  auto [rest, thread] = st.split(f, kTile * kTile);
  auto [ty, tx] = st.split(thread, kTile);
  st.reorder({ty, tx, rest});
  st.bind(ty, "threadIdx.y");
  st.bind(tx, "threadIdx.x");
}

tir::Stmt flat_loops(int64_t n, const std::function<tir::Stmt(Expr)> &body) {
  int64_t threads = std::min(kThreads, n);
  tir::Var bx = tir::make_var("bx"), tx = tir::make_var("tx");
  Expr i = Expr(bx) * static_cast<int>(threads) + tx;
  tir::Stmt s = body(i);
  if (n % threads != 0) s = tir::IfThenElse::make(i < tir::make_const(tir::int32(), n), s);
  s = tir::For::make(tx, threads, tir::ForKind::kThreadX, s);
  return tir::For::make(bx, (n + threads - 1) / threads, tir::ForKind::kBlockX, s);
}

int64_t reduction_threads(int64_t len) {
  int64_t t = 32;
  while (t < kThreads && t < len) t *= 2;
  return t;
}

tir::Stmt block_reduce(const tir::Buffer &red, int64_t threads, int64_t len, Expr init,
                       const std::function<Expr(Expr, Expr)> &combine,
                       const std::function<Expr(Expr)> &value) {
  using namespace tir;
  const int T = static_cast<int>(threads);
  // Each thread's partial result over len / threads strided elements (coalesced reads).
  Var t = make_var("t"), i = make_var("i");
  Expr idx = Expr(i) * T + t;
  Expr step = combine(load(red, {t}), value(idx));
  if (len % threads != 0) step = select(idx < make_const(int32(), len), step, load(red, {t}));
  std::vector<Stmt> phases;
  phases.push_back(
      For::make(t, threads, ForKind::kThreadX,
                Seq::make({Store::make(red, {t}, init),
                           For::make(i, (len + threads - 1) / threads, ForKind::kSerial,
                                     Store::make(red, {t}, step))})));
  // The tree: red[t] = combine(red[t], red[t + half]) for t < half, halving each step.
  for (int64_t half = threads / 2; half >= 1; half /= 2) {
    Var u = make_var("t");
    const int h = static_cast<int>(half);
    phases.push_back(
        For::make(u, half, ForKind::kThreadX,
                  Store::make(red, {u}, combine(load(red, {u}), load(red, {Expr(u) + h})))));
  }
  return Seq::make(phases);
}

std::string unary_node_kernel(Unary op, const Node &node, GpuNodeKernel *k) {
  k->func = unary(op, graph::num_elements(node.outputs[0]->shape));
  return "";
}

}  // namespace vacc::ops::gpu
