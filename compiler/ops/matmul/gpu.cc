// Dense (matrix product) on the GPU, scheduled as TVM schedules CUDA matmuls: each block computes
// a tile of (16 * rows) x (16 * cols) outputs with 16x16 threads, each thread a rows x cols
// register tile (a local accumulator computed at the block); per 16-deep step of the reduction
// the block's a and b tiles are staged in shared memory (cache_read into the shared scope),
// loaded cooperatively by all threads in consecutive (coalesced) order.
#include "ops/gpu/common.h"
#include "vacc/schedule/to_loop_ir.h"

namespace vacc::ops::gpu {

tir::Func dense(int64_t m, int64_t n, int64_t k, bool trans_b, bool has_bias) {
  Tensor a = te::placeholder("a", {m, k}, tir::float32());
  Tensor b = te::placeholder("b", trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n},
                             tir::float32());
  Tensor bias = has_bias ? te::placeholder("bias", {n}, tir::float32()) : nullptr;
  Tensor acc = te::reduce_sum("acc", {m, n}, {{"rk", k}}, [&](const auto &i, const auto &r) {
    Expr bv = trans_b ? (*b)({i[1], r[0]}) : (*b)({r[0], i[1]});
    return (*a)({i[0], r[0]}) * bv;
  });
  Tensor y = te::compute("y", {m, n}, [&](const auto &i) {
    Expr v = (*acc)({i[0], i[1]});
    return bias ? v + (*bias)({i[1]}) : v;
  });
  // Register tile per thread: up to 4x4, less for small matrices (a batch-1 dense is one row).
  const int64_t rows = m >= 4 * kTile ? 4 : 1, cols = n >= 4 * kTile ? 4 : 1;
  schedule::Schedule s({y});
  schedule::Stage &sy = s[y];
  auto [by, yi] = sy.split(sy.axis()[0], kTile * rows);
  auto [bx, xi] = sy.split(sy.axis()[1], kTile * cols);
  auto [ty, ri] = sy.split(yi, rows);
  auto [tx, ci] = sy.split(xi, cols);
  sy.reorder({by, bx, ty, tx, ri, ci});
  sy.bind(by, "blockIdx.y");
  sy.bind(bx, "blockIdx.x");
  sy.bind(ty, "threadIdx.y");
  sy.bind(tx, "threadIdx.x");
  sy.unroll(ri);
  sy.unroll(ci);

  // The accumulator: computed at the block, its threads over the block's tile.
  Tensor local = acc;
  schedule::Stage &sa = s[local];
  sa.set_scope(tir::Scope::kLocal);
  sa.compute_at(sy, bx);
  auto [aty, ari] = sa.split(sa.axis()[0], rows);
  auto [atx, aci] = sa.split(sa.axis()[1], cols);
  auto [ko, ki] = sa.split(sa.reduce_axis()[0], kTile);
  sa.reorder({ko, aty, atx, ki, ari, aci});
  sa.bind(aty, "threadIdx.y");
  sa.bind(atx, "threadIdx.x");
  sa.unroll(ari);
  sa.unroll(aci);

  Tensor as = s.cache_read(a, tir::Scope::kShared, {local});
  Tensor bs = s.cache_read(b, tir::Scope::kShared, {local});
  s[as].compute_at(sa, ko);
  s[bs].compute_at(sa, ko);
  cooperative_copy(s, as);
  cooperative_copy(s, bs);

  std::vector<Tensor> args = {a, b};
  if (bias) args.push_back(bias);
  args.push_back(y);
  return schedule::to_loop_ir(s, "dense", args);
}

namespace {

std::string dense_node(const Node &node, GpuNodeKernel *k) {
  const graph::Value &a = *node.inputs.at(0), &b = *node.inputs.at(1);
  const graph::Shape &out = node.outputs[0]->shape;
  if (a.rank() != 2 || b.rank() != 2) return "operands that are not matrices";
  if (node.op == OpKind::kMatMul && (node.input(2) || node.attrs.has("activation")))
    return "a fused bias or activation (the CPU's fused MatMul)";
  bool tb = node.op == OpKind::kGemm && node.attrs.get_int("transB", 0) != 0;
  if (node.op == OpKind::kGemm &&
      (node.attrs.get_int("transA", 0) != 0 || node.attrs.get_float("alpha", 1) != 1.0f ||
       node.attrs.get_float("beta", 1) != 1.0f)) {
    return "transA, alpha or beta";
  }
  const graph::Value *c = node.op == OpKind::kGemm ? node.input(2) : nullptr;
  if (c && !(c->rank() == 1 && c->shape[0] == out[1])) return "a bias that is not [N]";
  k->func = dense(out[0], out[1], a.shape[1], tb, c != nullptr);
  return "";
}

}  // namespace

void add_matmul_node_kernels(std::vector<GpuLowering> &lowerings) {
  lowerings.push_back({OpKind::kGemm, dense_node});
  lowerings.push_back({OpKind::kMatMul, dense_node});
}

}  // namespace vacc::ops::gpu
