// Matrix products: Gemm, MatMul (NumPy batching and broadcasting), MatMulInteger,
// QLinearMatMul and vacc.QDense, all through Eigen.
#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::ops {

namespace {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Batched matrix product of a [..., M, K] and b [..., K, N] (1-D operands promoted as NumPy
// does) into out, computing in T.
template <typename T>
void batched_matmul(const T *a, Shape sa, const T *b, Shape sb, T *out) {
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  Shape batch = broadcast_shapes(ba, bb);
  int64_t nb = num_elements(batch);
  int rank = static_cast<int>(batch.size());
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < nb; ++i) {
    // Batch offsets of a and b for this output batch index.
    int64_t oa = 0, ob = 0, stride_a = 1, stride_b = 1;
    for (int d = rank - 1; d >= 0; --d) {
      int ja = d - (rank - static_cast<int>(ba.size()));
      int jb = d - (rank - static_cast<int>(bb.size()));
      if (ja >= 0) {
        oa += (ba[ja] == 1 ? 0 : idx[d]) * stride_a;
        stride_a *= ba[ja];
      }
      if (jb >= 0) {
        ob += (bb[jb] == 1 ? 0 : idx[d]) * stride_b;
        stride_b *= bb[jb];
      }
    }
    Eigen::Map<const RowMatrix<T>> am(a + oa * M * K, M, K);
    Eigen::Map<const RowMatrix<T>> bm(b + ob * K * N, K, N);
    Eigen::Map<RowMatrix<T>> om(out + i * M * N, M, N);
    om.noalias() = am * bm;
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
}

// Integer operand minus its zero point; the zero point is a scalar, or per row of a
// (axis -2) / per column of b (axis -1).
std::vector<int32_t> centered(const Tensor &t, const Tensor *zp, bool per_column) {
  std::vector<int32_t> out(t.size());
  int64_t cols = t.rank() >= 1 ? t.shape().back() : 1;
  int64_t rows = t.rank() >= 2 ? t.dim(t.rank() - 2) : 1;
  for (int64_t i = 0; i < t.size(); ++i) {
    int64_t z = 0;
    if (zp && zp->size() == 1) {
      z = zp->as_int(0);
    } else if (zp && zp->size() > 1) {
      z = per_column ? zp->as_int(i % cols) : zp->as_int((i / cols) % rows);
    }
    out[i] = static_cast<int32_t>(t.as_int(i) - z);
  }
  return out;
}

Tensor integer_matmul(const Node &node, const Tensor &a, const Tensor *azp, const Tensor &b,
                      const Tensor *bzp) {
  std::vector<int32_t> ac = centered(a, azp, false), bc = centered(b, bzp, true);
  Tensor acc(DType::kInt32, node.outputs[0]->shape);
  batched_matmul<int32_t>(ac.data(), a.shape(), bc.data(), b.shape(), acc.data<int32_t>());
  return acc;
}

}  // namespace

Outputs gemm(const Node &node, const Inputs &in) {
  const Tensor &a = *in[0], &b = *in[1];
  const Tensor *c = in.size() > 2 ? in[2] : nullptr;
  if (a.dtype() != DType::kFloat32) fail("Gemm needs float32 inputs");
  float alpha = node.attrs.get_float("alpha", 1.0f), beta = node.attrs.get_float("beta", 1.0f);
  Eigen::Map<const RowMatrix<float>> am(a.data<float>(), a.dim(0), a.dim(1));
  Eigen::Map<const RowMatrix<float>> bm(b.data<float>(), b.dim(0), b.dim(1));
  Tensor out(DType::kFloat32, node.outputs[0]->shape);
  int64_t M = out.dim(0), N = out.dim(1);
  Eigen::Map<RowMatrix<float>> om(out.data<float>(), M, N);
  bool ta = node.attrs.get_int("transA", 0), tb = node.attrs.get_int("transB", 0);
  if (ta && tb)
    om.noalias() = am.transpose() * bm.transpose();
  else if (ta)
    om.noalias() = am.transpose() * bm;
  else if (tb)
    om.noalias() = am * bm.transpose();
  else
    om.noalias() = am * bm;
  if (alpha != 1.0f) om *= alpha;
  if (c) {
    const float *pc = c->data<float>();
    Shape cs = c->shape();
    int64_t cr = cs.size() == 2 ? cs[0] : 1, cc = cs.empty() ? 1 : cs.back();
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        om(i, j) += beta * pc[(cr == 1 ? 0 : i) * cc + (cc == 1 ? 0 : j)];
  }
  return single(std::move(out));
}

Outputs matmul(const Node &node, const Inputs &in) {
  const Tensor &a = *in[0], &b = *in[1];
  Tensor out(a.dtype(), node.outputs[0]->shape);
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      batched_matmul<T>(a.data<T>(), a.shape(), b.data<T>(), b.shape(), out.data<T>());
    } else {
      fail("MatMul of {} is not supported", dtype_name(a.dtype()));
    }
  });
  // A fused output stage (passes/fuse_matmul_epilogues.h, float only): + bias[N], then GELU,
  // each as the unfused Add and vacc.Gelu compute it.
  if (in.size() > 2 && in[2]) {
    const int64_t N = out.shape().back();
    float *o = out.data<float>();
    const float *bias = in[2]->data<float>();
    for (int64_t i = 0; i < out.size(); ++i) o[i] += bias[i % N];
  }
  const std::string act = node.attrs.get_string("activation", "");
  if (act == "gelu" || act == "gelu_tanh") {
    float *o = out.data<float>();
    for (int64_t i = 0; i < out.size(); ++i)
      o[i] = static_cast<float>(gelu(static_cast<double>(o[i]), act == "gelu_tanh"));
  }
  return single(std::move(out));
}

Outputs matmul_integer(const Node &node, const Inputs &in) {
  const Tensor *azp = in.size() > 2 ? in[2] : nullptr;
  const Tensor *bzp = in.size() > 3 ? in[3] : nullptr;
  return single(integer_matmul(node, *in[0], azp, *in[1], bzp));
}

Outputs qlinear_matmul(const Node &node, const Inputs &in) {
  // a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp
  Tensor acc = integer_matmul(node, *in[0], in[2], *in[3], in[5]);
  const Tensor &sa = *in[1], &sb = *in[4];
  double sy = in[6]->as_double(0);
  int64_t zy = in.size() > 7 && in[7] ? in[7]->as_int(0) : 0;
  int64_t N = acc.shape().back(), M = acc.rank() >= 2 ? acc.dim(acc.rank() - 2) : 1;
  Tensor out(node.outputs[0]->dtype, acc.shape());
  const int32_t *pa = acc.data<int32_t>();
  store_saturated(out, [&](int64_t i) {
    double a_scale = sa.size() == 1 ? sa.as_double(0) : sa.as_double((i / N) % M);
    double b_scale = sb.size() == 1 ? sb.as_double(0) : sb.as_double(i % N);
    return std::nearbyint(pa[i] * (a_scale * b_scale / sy)) + static_cast<double>(zy);
  });
  return single(std::move(out));
}

Outputs qdense(const Node &node, const Inputs &in) {
  bool packed = node.inputs[0]->layout.blocked;
  Tensor x = packed ? unblock_tensor(*in[0], unblocked_shape(in[0]->shape())) : *in[0];
  Tensor w = packed ? unblock_tensor(*in[1], unblocked_shape(in[1]->shape())) : *in[1];
  const Tensor *bias = in.size() > 2 ? in[2] : nullptr;
  int64_t N = x.dim(0), K = x.dim(1), M = w.dim(0);
  // int8 products summed in double are exact (|sum| <= 2^14 K < 2^53): bit-identical to
  // int32 accumulation, and vectorized by Eigen.
  RowMatrix<double> xm = Eigen::Map<const RowMatrix<int8_t>>(x.data<int8_t>(), N, K).cast<double>();
  RowMatrix<double> wm = Eigen::Map<const RowMatrix<int8_t>>(w.data<int8_t>(), M, K).cast<double>();
  RowMatrix<int64_t> acc = (xm * wm.transpose()).cast<int64_t>();
  Requant rq = Requant::from(node);
  Tensor out(DType::kInt8, {N, M});
  int8_t *po = out.data<int8_t>();
  for (int64_t i = 0; i < N; ++i)
    for (int64_t m = 0; m < M; ++m) {
      int32_t b = bias && m < bias->size() ? bias->data<int32_t>()[m] : 0;
      int32_t v = static_cast<int32_t>(static_cast<uint32_t>(acc(i, m)) + static_cast<uint32_t>(b));
      // (acc fits int32 for K < 2^17; the add wraps like the accelerator's.)
      po[i * M + m] = rq.apply(v, m);
    }
  if (packed) {
    const Layout &l = node.outputs[0]->layout;
    out = block_tensor(out, l.block_n, l.block_c);
  }
  return single(std::move(out));
}

}  // namespace vacc::graph::ops

namespace vacc::graph::ops {
namespace {

Shape matmul_shape(const Value &a, const Value &b) {
  if (a.rank() < 1 || b.rank() < 1) fail("MatMul inputs must have rank >= 1");
  Shape sa = a.shape, sb = b.shape;
  bool va = sa.size() == 1, vb = sb.size() == 1;
  if (va) sa.insert(sa.begin(), 1);
  if (vb) sb.push_back(1);
  if (sa.back() != sb[sb.size() - 2]) {
    fail("inner dimensions differ: '{}' {} times '{}' {}", a.name, shape_str(a.shape), b.name,
         shape_str(b.shape));
  }
  Shape batch = broadcast_shapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2));
  Shape out = batch;
  if (!va) out.push_back(sa[sa.size() - 2]);
  if (!vb) out.push_back(sb.back());
  return out;
}

void infer_gemm(Node &n) {
  Value &a = input_of(n, 0, "A"), &b = input_of(n, 1, "B");
  require_float(a, "A");
  if (a.rank() != 2 || b.rank() != 2) {
    fail("inputs must be matrices, got {} and {}", shape_str(a.shape), shape_str(b.shape));
  }
  bool ta = n.attrs.get_int("transA", 0), tb = n.attrs.get_int("transB", 0);
  int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  int64_t kb = tb ? b.shape[1] : b.shape[0], nn = tb ? b.shape[0] : b.shape[1];
  if (k != kb) {
    fail("inner dimensions differ: A {} (transA={}) and B {} (transB={})", shape_str(a.shape),
         int(ta), shape_str(b.shape), int(tb));
  }
  if (Value *c = n.input(2)) {
    Shape bc = broadcast_shapes(c->shape, {m, nn});
    if (bc != Shape{m, nn}) fail("C {} does not broadcast to [{},{}]", shape_str(c->shape), m, nn);
  }
  set_out(n, 0, a.dtype, {m, nn});
}

void infer_matmul(Node &n) {
  Value &a = input_of(n, 0, "A"), &b = input_of(n, 1, "B");
  require_dtype(b, "B", a.dtype);
  const Shape out = matmul_shape(a, b);
  if (const Value *bias = n.input(2)) {  // a fused bias (fuse_matmul_epilogues.h)
    if (a.dtype != DType::kFloat32 || bias->dtype != DType::kFloat32 || bias->rank() != 1 ||
        out.empty() || bias->shape[0] != out.back())
      fail("the fused bias '{}' {} must be float32 [{}]", bias->name, shape_str(bias->shape),
           out.empty() ? 0 : out.back());
  }
  set_out(n, 0, a.dtype, out);
}

void infer_matmul_integer(Node &n) {
  Value &a = input_of(n, 0, "A"), &b = input_of(n, 1, "B");
  require_int8ish(a, "A");
  require_int8ish(b, "B");
  set_out(n, 0, DType::kInt32, matmul_shape(a, b));
}

void infer_qlinear_matmul(Node &n) {
  Value &a = input_of(n, 0, "a"), &b = input_of(n, 3, "b");
  require_int8ish(a, "a");
  require_int8ish(b, "b");
  set_out(n, 0, zero_point_dtype(n, 7, DType::kUInt8), matmul_shape(a, b));
}

// vacc.QDense: int8 x [N, K] and w [M, K], int32 bias, requantized to int8. Packed operands
// (pack_layout.h) are computed on their plain, channel-padded shapes.
void infer_qdense(Node &n) {
  Value x = input_of(n, 0, "x"), w = input_of(n, 1, "w");
  require_dtype(x, "x", DType::kInt8);
  require_dtype(w, "w", DType::kInt8);
  bool packed = x.layout.blocked;
  if (packed) {
    if (!w.layout.blocked) fail("packed input with unpacked weights");
    x.shape = unblocked_shape(x.shape);
    w.shape = unblocked_shape(w.shape);
  }
  if (x.rank() != 2 || w.rank() != 2 || x.shape[1] != w.shape[1]) {
    fail("x {} and w {} must be [N,K] and [M,K]", shape_str(x.shape), shape_str(w.shape));
  }
  Shape out = {x.shape[0], w.shape[0]};
  check_bias(n.input(2), w.shape[0]);
  check_requant_attrs(n, w.shape[0]);
  if (packed) {
    int64_t bn = n.attrs.get_int("out_block_n"), bc = n.attrs.get_int("out_block_c");
    out = blocked_shape(out, bn, bc);
    set_out(n, 0, DType::kInt8, out);
    n.outputs[0]->layout = {true, static_cast<int>(bn), static_cast<int>(bc)};
  } else {
    set_out(n, 0, DType::kInt8, out);
  }
  // Residual adds fuse into convolutions only (graph/passes/fuse_residual_adds.h).
  if (const Value *skip = n.input(3)) {
    fail("residual input '{}' {} {} must be int8 of the output's shape {}", skip->name,
         dtype_name(skip->dtype), shape_str(skip->shape), shape_str(out));
  }
}

int64_t gemm_macs(const Node &node) {
  const Value *a = node.input(0);
  const int64_t k = node.attrs.get_int("transA", 0) ? a->shape.at(0) : a->shape.at(1);
  return num_elements(node.outputs[0]->shape) * k;
}

int64_t matmul_macs(const Node &node) {
  const Value *a = node.input(0);
  return a->rank() ? num_elements(node.outputs[0]->shape) * a->shape.back() : 0;
}

int64_t qdense_macs(const Node &node) {
  return weight_macs(node, 1);
}

}  // namespace

void add_matmul_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kGemm,
                  .name = "Gemm",
                  .onnx = true,
                  .infer = infer_gemm,
                  .reference = gemm,
                  .quantize = QuantRule::kDense,
                  .macs = gemm_macs});
  defs.push_back({.op = OpKind::kMatMul,
                  .name = "MatMul",
                  .onnx = true,
                  .infer = infer_matmul,
                  .reference = matmul,
                  .quantize = QuantRule::kDense,
                  .macs = matmul_macs});
  defs.push_back({.op = OpKind::kQLinearMatMul,
                  .name = "QLinearMatMul",
                  .onnx = true,
                  .opset_min = 10,
                  .infer = infer_qlinear_matmul,
                  .reference = qlinear_matmul,
                  .macs = matmul_macs});
  defs.push_back({.op = OpKind::kMatMulInteger,
                  .name = "MatMulInteger",
                  .onnx = true,
                  .opset_min = 10,
                  .infer = infer_matmul_integer,
                  .reference = matmul_integer,
                  .macs = matmul_macs});
  defs.push_back({.op = OpKind::kQDense,
                  .name = "vacc.QDense",
                  .infer = infer_qdense,
                  .reference = qdense,
                  .macs = qdense_macs,
                  .accel_operands = AccelOperands::kGemm});
}

}  // namespace vacc::graph::ops
