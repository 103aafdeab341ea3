// Element-wise operators on the GPU: one thread per element, 256 threads per block. The unary
// and binary kernels serve every family's element-wise nodes (this family's Relu, Sigmoid and
// + - * /, the math and activation families' functions); GELU, erf, Softplus and Softsign are the
// CPU backend's definitions (their families' compute.cc), with the GPU's float32 tanh.
#include "ops/activation/compute.h"
#include "ops/gpu/common.h"
#include "ops/math/compute.h"
#include "vacc/support/error.h"

namespace vacc::ops::gpu {
namespace {

Expr sigmoid(Expr v) {
  return f32(1) / (f32(1) + tir::Call::make(tir::CallOp::kExp, {f32(0) - v}));
}

Expr tanh(const Expr &v) {
  return tir::Call::make(tir::CallOp::kTanh, {v});
}

Expr apply(Unary op, Expr v) {
  switch (op) {
    case Unary::kRelu:
      return tir::max(v, f32(0));
    case Unary::kSigmoid:
      return sigmoid(v);
    case Unary::kTanh:
      return tanh(v);
    case Unary::kExp:
      return tir::Call::make(tir::CallOp::kExp, {v});
    case Unary::kGelu:
      return compute::gelu(v, false, tanh);
    case Unary::kGeluTanh:
      return compute::gelu(v, true, tanh);
    case Unary::kSoftplus:
      return compute::softplus(v);
    case Unary::kSoftsign:
      return compute::softsign(v);
  }
  return v;
}

Expr apply(Binary op, Expr a, Expr b) {
  switch (op) {
    case Binary::kAdd:
      return a + b;
    case Binary::kSub:
      return a - b;
    case Binary::kMul:
      return a * b;
    case Binary::kDiv:
      return a / b;
    case Binary::kMax:
      return tir::max(a, b);
    case Binary::kMin:
      return tir::min(a, b);
  }
  return a;
}

}  // namespace

tir::Func unary(Unary op, int64_t n) {
  tir::Buffer x = tir::make_buffer("x", tir::float32(), {n});
  tir::Buffer y = tir::make_buffer("y", tir::float32(), {n});
  tir::Stmt body =
      flat_loops(n, [&](Expr i) { return tir::Store::make(y, {i}, apply(op, tir::load(x, {i}))); });
  return tir::Func{"unary", {x, y}, body};
}

tir::Func binary(Binary op, int64_t outer, int64_t b_n, int64_t inner) {
  const int64_t n = outer * b_n * inner;
  tir::Buffer a = tir::make_buffer("a", tir::float32(), {n});
  tir::Buffer b = tir::make_buffer("b", tir::float32(), {b_n});
  tir::Buffer y = tir::make_buffer("y", tir::float32(), {n});
  tir::Stmt body = flat_loops(n, [&](Expr i) {
    Expr j = inner == 1 ? i : i / static_cast<int>(inner);
    if (outer > 1) j = j % static_cast<int>(b_n);
    return tir::Store::make(y, {i}, apply(op, tir::load(a, {i}), tir::load(b, {j})));
  });
  return tir::Func{"binary", {a, b, y}, body};
}

namespace {

// b broadcast onto the output's shape as [outer, b_n, inner]; false when b is not of that form.
bool broadcast_form(const graph::Shape &out, const graph::Shape &b, int64_t *outer, int64_t *b_n,
                    int64_t *inner) {
  if (b.size() > out.size()) return false;
  graph::Shape bb(out.size() - b.size(), 1);
  bb.insert(bb.end(), b.begin(), b.end());
  int lo = -1, hi = -1;
  for (size_t d = 0; d < out.size(); ++d) {
    if (bb[d] == 1 && out[d] != 1) continue;
    if (bb[d] != out[d]) return false;
    if (lo < 0) lo = static_cast<int>(d);
    if (hi >= 0 && hi != static_cast<int>(d) - 1) return false;  // not one contiguous range
    hi = static_cast<int>(d);
  }
  *outer = *b_n = *inner = 1;
  for (size_t d = 0; d < out.size(); ++d) {
    if (lo < 0 || static_cast<int>(d) < lo) {
      *outer *= out[d];
    } else if (static_cast<int>(d) <= hi) {
      *b_n *= out[d];
    } else {
      *inner *= out[d];
    }
  }
  return true;
}

std::string relu_node(const Node &node, GpuNodeKernel *k) {
  return unary_node_kernel(Unary::kRelu, node, k);
}

std::string sigmoid_node(const Node &node, GpuNodeKernel *k) {
  return unary_node_kernel(Unary::kSigmoid, node, k);
}

std::string binary_node(const Node &node, GpuNodeKernel *k) {
  const graph::Value &a = *node.inputs.at(0), &b = *node.inputs.at(1);
  const graph::Shape &out = node.outputs[0]->shape;
  int64_t outer, b_n, inner;
  if (a.shape != out || !broadcast_form(out, b.shape, &outer, &b_n, &inner)) {
    return "this broadcast (the GPU broadcasts the second operand along leading and trailing "
           "axes)";
  }
  Binary op = node.op == OpKind::kAdd   ? Binary::kAdd
              : node.op == OpKind::kSub ? Binary::kSub
              : node.op == OpKind::kMul ? Binary::kMul
                                        : Binary::kDiv;
  k->func = binary(op, outer, b_n, inner);
  return "";
}

}  // namespace

void add_elementwise_node_kernels(std::vector<GpuLowering> &lowerings) {
  lowerings.push_back({OpKind::kRelu, relu_node});
  lowerings.push_back({OpKind::kSigmoid, sigmoid_node});
  for (OpKind op : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv})
    lowerings.push_back({op, binary_node});
}

}  // namespace vacc::ops::gpu
