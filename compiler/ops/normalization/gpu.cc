// Softmax, LogSoftmax and layer normalization on the GPU: one block per row, every pass over the
// row shared by the block's threads (consecutive threads on consecutive elements), the row's
// maximum, sum or moments by tree reductions in shared memory (common.h block_reduce).
#include "ops/gpu/common.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::ops::gpu {

tir::Func softmax(int64_t outer, int64_t len, int64_t inner, bool log) {
  using namespace tir;
  Buffer x = make_buffer("x", float32(), {outer, len, inner});
  Buffer y = make_buffer("y", float32(), {outer, len, inner});
  const int64_t threads = reduction_threads(len);
  Buffer mx = make_buffer("mx", float32(), {threads}, Scope::kShared);
  Buffer sum = make_buffer("sum", float32(), {threads}, Scope::kShared);
  Var row = make_var("row");
  Expr o = Expr(row) / static_cast<int>(inner), in = Expr(row) % static_cast<int>(inner);
  auto X = [&](Expr l) { return load(x, {o, l, in}); };
  auto e = [&](Expr l) { return Call::make(CallOp::kExp, {X(l) - load(mx, {0})}); };
  Stmt max_pass = block_reduce(
      mx, threads, len, FloatImm::make(float32(), -INFINITY),
      [](Expr a, Expr b) { return max(a, b); }, X);
  Stmt sum_pass = block_reduce(
      sum, threads, len, f32(0), [](Expr a, Expr b) { return a + b; }, e);
  Var t = make_var("t"), i = make_var("i");
  const int T = static_cast<int>(threads);
  Expr l = Expr(i) * T + t;
  Stmt out = Store::make(y, {o, l, in},
                         log ? X(l) - load(mx, {0}) - Call::make(CallOp::kLog, {load(sum, {0})})
                             : e(l) / load(sum, {0}));
  if (len % threads != 0) out = IfThenElse::make(l < make_const(int32(), len), out);
  Stmt out_pass = For::make(t, threads, ForKind::kThreadX,
                            For::make(i, (len + threads - 1) / threads, ForKind::kSerial, out));
  Stmt body =
      For::make(row, outer * inner, ForKind::kBlockX,
                Allocate::make(mx, Allocate::make(sum, Seq::make({max_pass, sum_pass, out_pass}))));
  return Func{log ? "log_softmax" : "softmax", {x, y}, body};
}

tir::Func layer_norm(int64_t rows, int64_t cols, double eps, bool has_bias) {
  using namespace tir;
  Buffer x = make_buffer("x", float32(), {rows, cols});
  Buffer gamma = make_buffer("gamma", float32(), {cols});
  Buffer beta = has_bias ? make_buffer("beta", float32(), {cols}) : Buffer();
  Buffer y = make_buffer("y", float32(), {rows, cols});
  const int64_t threads = reduction_threads(cols);
  Buffer sum = make_buffer("sum", float32(), {threads}, Scope::kShared);
  Buffer sq = make_buffer("sq", float32(), {threads}, Scope::kShared);
  Var row = make_var("row");
  const Expr n = f32(static_cast<double>(cols));
  auto X = [&](Expr c) { return load(x, {row, c}); };
  auto mean = [&] { return load(sum, {0}) / n; };
  auto plus = [](Expr a, Expr b) { return a + b; };
  Stmt mean_pass = block_reduce(sum, threads, cols, f32(0), plus, X);
  Stmt var_pass = block_reduce(sq, threads, cols, f32(0), plus, [&](Expr c) {
    Expr d = X(c) - mean();
    return d * d;
  });
  Var t = make_var("t"), i = make_var("i");
  Expr c = Expr(i) * static_cast<int>(threads) + t;
  Expr inv = f32(1.0) / Call::make(CallOp::kSqrt, {load(sq, {0}) / n + f32(eps)});
  Expr v = (X(c) - mean()) * inv * load(gamma, {c});
  Stmt out = Store::make(y, {row, c}, has_bias ? v + load(beta, {c}) : v);
  if (cols % threads != 0) out = IfThenElse::make(c < make_const(int32(), cols), out);
  Stmt out_pass = For::make(t, threads, ForKind::kThreadX,
                            For::make(i, (cols + threads - 1) / threads, ForKind::kSerial, out));
  Stmt body = For::make(
      row, rows, ForKind::kBlockX,
      Allocate::make(sum, Allocate::make(sq, Seq::make({mean_pass, var_pass, out_pass}))));
  std::vector<Buffer> params = {x, gamma};
  if (has_bias) params.push_back(beta);
  params.push_back(y);
  return Func{"layer_norm", params, body};
}

namespace {

std::string softmax_node(const Node &node, GpuNodeKernel *k) {
  const graph::Value &x = *node.inputs.at(0);
  bool coerce = node.attrs.get_int("coerce_2d", 0) != 0;
  int rank = std::max(1, x.rank());
  int axis = graph::normalize_axis(node.attrs.get_int("axis", -1), rank, "axis", coerce);
  int64_t outer = 1, len = 1, inner = 1;
  for (int i = 0; i < x.rank(); ++i) {
    if (i < axis)
      outer *= x.shape[i];
    else if (i == axis || coerce)
      len *= x.shape[i];
    else
      inner *= x.shape[i];
  }
  k->func = softmax(outer, len, inner, node.op == OpKind::kLogSoftmax);
  return "";
}

// LayerNormalization over its trailing axes as [rows, cols], with a scale (and bias) of the
// normalized shape's cols elements.
std::string layer_norm_node(const Node &node, GpuNodeKernel *k) {
  const graph::Value &x = *node.inputs.at(0);
  const int axis = graph::normalize_axis(node.attrs.get_int("axis", -1), x.rank(), "axis");
  int64_t rows = 1;
  for (int d = 0; d < axis; ++d) rows *= x.shape[d];
  const int64_t cols = graph::num_elements(x.shape) / std::max<int64_t>(rows, 1);
  for (const graph::Value *p : {node.input(1), node.input(2)}) {
    if (p && graph::num_elements(p->shape) != cols)
      return "a scale or bias broadcast over the normalized axes (the GPU reads them whole)";
  }
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i]) return "the Mean and InvStdDev outputs";
  k->func = layer_norm(rows, cols, node.attrs.get_float("epsilon", 1e-5f), node.input(2));
  return "";
}

}  // namespace

void add_normalization_node_kernels(std::vector<GpuLowering> &lowerings) {
  lowerings.push_back({OpKind::kSoftmax, softmax_node});
  lowerings.push_back({OpKind::kLogSoftmax, softmax_node});
  lowerings.push_back({OpKind::kLayerNormalization, layer_norm_node});
}

}  // namespace vacc::ops::gpu
