// LayerNormalization on the CPU over the trailing axes. Its moments have no compute form in te,
// so the loops are written directly in loop IR (as the reductions'): the rows outside (parallel
// on large tensors), each row's passes inside with float64 accumulators, as the graph reference.
#include "ops/cpu/common.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

using namespace tir;

// LayerNormalization: per row of the leading axes, the mean and variance in float64 over the
// normalized axes, then (x - mean) / sqrt(var + eps) * scale + bias in the element type, scale
// and bias broadcast over the normalized axes; Mean and InvStdDev stored when present.
CpuKernel build_layer_norm(const Node &node) {
  KernelBuilder kb(node);
  const Shape xs = kb.in_value(0).shape;
  const DataType t = kb.in_type(0), f64 = DataType::float_(64);
  if (t != float32()) kb.unsupported(a_type(t) + " input (float32 only)");
  const int axis =
      graph::normalize_axis(node.attrs.get_int("axis", -1), static_cast<int>(xs.size()), "axis");
  const double eps = node.attrs.get_float("epsilon", 1e-5f);
  Shape norm(xs.begin() + axis, xs.end());
  int64_t rows = 1;
  for (int d = 0; d < axis; ++d) rows *= xs[d];
  const int64_t cols = graph::num_elements(norm);
  Shape row_view = {rows};
  row_view.insert(row_view.end(), norm.begin(), norm.end());
  Buffer x = make_buffer("x", t, row_view);
  Buffer y = make_buffer("y", t, row_view);
  // Scale and bias viewed with the normalized rank (leading unit axes added).
  auto param = [&](size_t i, const char *name) {
    Shape s = kb.in_value(i).shape;
    s.insert(s.begin(), norm.size() - s.size(), 1);
    return make_buffer(name, t, at_least_1d(s));
  };
  Buffer scale = param(1, "scale");
  Buffer bias = kb.has_input(2) ? param(2, "bias") : Buffer();
  auto param_at = [&](const Buffer &b, const std::vector<Expr> &c) {
    std::vector<Expr> idx;
    for (size_t d = 0; d < norm.size(); ++d) idx.push_back(b->shape[d] == 1 ? Expr(0) : c[d]);
    if (idx.empty()) idx.push_back(0);
    return load(b, idx);
  };
  std::vector<Buffer> outs = {y};
  Buffer mean_out, inv_out;
  if (node.outputs.size() > 1 && node.outputs[1])
    outs.push_back(mean_out = make_buffer("mean", float32(), {rows}));
  if (node.outputs.size() > 2 && node.outputs[2])
    outs.push_back(inv_out = make_buffer("inv_std_dev", float32(), {rows}));
  Buffer sum = make_buffer("sum", f64, {1}, Scope::kLocal);
  Buffer sq = make_buffer("sq", f64, {1}, Scope::kLocal);
  const bool parallel = graph::num_elements(xs) >= kParallelElements;
  Stmt body = loop_nest({rows}, "row", parallel, [&](const std::vector<Expr> &r) {
    auto at = [&](const std::vector<Expr> &c) {
      std::vector<Expr> idx = {r[0]};
      idx.insert(idx.end(), c.begin(), c.end());
      return idx;
    };
    const Expr n = fconst(f64, static_cast<double>(cols));
    const Expr mean = load(sum, {0}) / n;
    Stmt mean_pass = loop_nest(norm, "c", false, [&](const std::vector<Expr> &c) {
      return Store::make(sum, {0}, load(sum, {0}) + cast(f64, load(x, at(c))));
    });
    Stmt var_pass = loop_nest(norm, "c", false, [&](const std::vector<Expr> &c) {
      Expr d = cast(f64, load(x, at(c))) - mean;
      return Store::make(sq, {0}, load(sq, {0}) + d * d);
    });
    const Expr inv = fconst(f64, 1.0) / call(CallOp::kSqrt, load(sq, {0}) / n + fconst(f64, eps));
    Stmt out_pass = loop_nest(norm, "c", false, [&](const std::vector<Expr> &c) {
      Expr v = (load(x, at(c)) - cast(t, mean)) * cast(t, inv) * param_at(scale, c);
      if (bias) v = v + param_at(bias, c);
      return Store::make(y, at(c), v);
    });
    std::vector<Stmt> steps = {Store::make(sum, {0}, fconst(f64, 0.0)),
                               Store::make(sq, {0}, fconst(f64, 0.0)), mean_pass, var_pass,
                               out_pass};
    if (mean_out) steps.push_back(Store::make(mean_out, {r[0]}, cast(float32(), mean)));
    if (inv_out) steps.push_back(Store::make(inv_out, {r[0]}, cast(float32(), inv)));
    return Allocate::make(sum, Allocate::make(sq, Seq::make(steps)));
  });
  std::vector<std::pair<size_t, Buffer>> ins = {{0, x}, {1, scale}};
  if (bias) ins.emplace_back(2, bias);
  CpuKernel kernel;
  kernel.func = direct_func(node, ins, outs, body);
  return kernel;
}

}  // namespace

void add_layer_norm_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kLayerNormalization, build_layer_norm});
}

}  // namespace vacc::ops::cpu
