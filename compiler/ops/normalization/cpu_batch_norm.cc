// BatchNormalization on the CPU: inference with the running statistics, and training_mode=1
// with the batch's (float32 only).
#include "ops/cpu/common.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

// BatchNormalization with training_mode=1: batch statistics per channel (float64 sums, as the
// reference), the normalized output, and the updated running mean and variance.
CpuKernel batch_norm_training(KernelBuilder &kb) {
  const Node &node = kb.node();
  const Shape &xs = kb.in_value(0).shape;
  int64_t N = xs[0], C = xs[1], inner = graph::num_elements(xs) / std::max<int64_t>(N * C, 1);
  DataType t = tir::float32(), f64 = DataType::float_(64);
  Tensor x = kb.input(0, {N, C, inner});
  Tensor scale = kb.input(1), bias = kb.input(2), mean = kb.input(3), var = kb.input(4);
  float eps = node.attrs.get_float("epsilon", 1e-5f);
  float momentum = node.attrs.get_float("momentum", 0.9f);
  double count = static_cast<double>(N * inner);
  auto xv = [&](const auto &r, const auto &c) { return tir::cast(f64, (*x)({r[0], c, r[1]})); };
  Tensor s1 = te::reduce_sum("sum", {C}, {{"n", N}, {"i", inner}},
                             [&](const auto &c, const auto &r) { return xv(r, c[0]); });
  Tensor s2 =
      te::reduce_sum("sq", {C}, {{"n", N}, {"i", inner}},
                     [&](const auto &c, const auto &r) { return xv(r, c[0]) * xv(r, c[0]); });
  Tensor bm = te::compute("batch_mean", {C}, [&](const auto &c) {
    return tir::cast(t, (*s1)({c[0]}) / fconst(f64, count));
  });
  Tensor bv = te::compute("batch_var", {C}, [&](const auto &c) {
    Expr m = (*s1)({c[0]}) / fconst(f64, count);
    return tir::cast(t, (*s2)({c[0]}) / fconst(f64, count) - m * m);
  });
  Tensor y = te::compute("y", {N, C, inner}, [&](const auto &i) {
    Expr c = i[1];
    Expr a = (*scale)({c}) / tir::Call::make(tir::CallOp::kSqrt, {(*bv)({c}) + fconst(t, eps)});
    Expr b = (*bias)({c}) - (*bm)({c}) * a;
    return (*x)({i[0], i[1], i[2]}) * a + b;
  });
  float keep = 1 - momentum;
  Tensor rm = te::compute("running_mean", {C}, [&](const auto &c) {
    return (*mean)({c[0]}) * fconst(t, momentum) + (*bm)({c[0]}) * fconst(t, keep);
  });
  Tensor rv = te::compute("running_var", {C}, [&](const auto &c) {
    return (*var)({c[0]}) * fconst(t, momentum) + (*bv)({c[0]}) * fconst(t, keep);
  });
  std::vector<Tensor> all = {y, rm, rv}, outs;
  for (size_t k = 0; k < node.outputs.size() && k < 3; ++k) {
    if (node.outputs[k]) outs.push_back(all[k]);
  }
  schedule::Schedule s(outs);
  return kb.finish(s, outs);
}

CpuKernel build_batch_norm(const Node &node) {
  KernelBuilder kb(node);
  const Shape &out_shape = kb.out_value().shape.empty() ? Shape{1} : kb.out_value().shape;
  DataType t = kb.out_type();
  if (t != tir::float32()) kb.unsupported(a_type(t) + " input (float32 only)");
  if (node.attrs.get_int("training_mode", 0) != 0) return batch_norm_training(kb);
  Tensor x = kb.input(0);
  Tensor scale = kb.input(1), bias = kb.input(2), mean = kb.input(3), var = kb.input(4);
  float eps = node.attrs.get_float("epsilon", 1e-5f);
  Tensor out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
    std::vector<Expr> idx(i.begin(), i.end());
    Expr c = i[1];
    Expr a = (*scale)({c}) / tir::Call::make(tir::CallOp::kSqrt, {(*var)({c}) + fconst(t, eps)});
    Expr b = (*bias)({c}) - (*mean)({c}) * a;
    return (*x)(idx)*a + b;
  });
  return kb.finish_elementwise(out);
}

}  // namespace

void add_batch_norm_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kBatchNormalization, build_batch_norm});
}

}  // namespace vacc::ops::cpu
