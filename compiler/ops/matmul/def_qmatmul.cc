// vacc.QMatMul: the int8 product of two activations (attention's QK^T and scores x V), made by
// the quantizer (passes/quantize.h). Operands are 2-D and stacked by group: x [G*N, K] (group
// g's rows g*N ... g*N+N-1) and w [G*M, K] (its M rows, one per output column, as QDense's
// weights), with `groups` = G; out [G*N, M] = requantized x_g . w_g^T + bias, with QDense's
// requantization (shifts, clip; bias [M] int32 carries the rounding). Packed operands
// (pack_layout.h) are computed on their plain, channel-padded shapes.
#include <Eigen/Core>

#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::ops {

namespace {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Outputs qmatmul(const Node &node, const Inputs &in) {
  const bool packed = node.inputs[0]->layout.blocked;
  const Tensor x = packed ? unblock_tensor(*in[0], unblocked_shape(in[0]->shape())) : *in[0];
  const Tensor w = packed ? unblock_tensor(*in[1], unblocked_shape(in[1]->shape())) : *in[1];
  const Tensor *bias = in.size() > 2 ? in[2] : nullptr;
  const int64_t G = node.attrs.get_int("groups", 1);
  const int64_t N = x.dim(0) / G, K = x.dim(1), M = w.dim(0) / G;
  const Requant rq = Requant::from(node);
  Tensor out(DType::kInt8, {G * N, M});
  int8_t *po = out.data<int8_t>();
  for (int64_t g = 0; g < G; ++g) {
    // int8 products summed in double are exact (|sum| <= 2^14 K < 2^53).
    const RowMatrix<double> xm =
        Eigen::Map<const RowMatrix<int8_t>>(x.data<int8_t>() + g * N * K, N, K).cast<double>();
    const RowMatrix<double> wm =
        Eigen::Map<const RowMatrix<int8_t>>(w.data<int8_t>() + g * M * K, M, K).cast<double>();
    const RowMatrix<int64_t> acc = (xm * wm.transpose()).cast<int64_t>();
    for (int64_t i = 0; i < N; ++i)
      for (int64_t m = 0; m < M; ++m) {
        const int32_t b = bias && m < bias->size() ? bias->data<int32_t>()[m] : 0;
        const int32_t v =
            static_cast<int32_t>(static_cast<uint32_t>(acc(i, m)) + static_cast<uint32_t>(b));
        po[(g * N + i) * M + m] = rq.apply(v, m);
      }
  }
  if (packed) {
    const Layout &l = node.outputs[0]->layout;
    out = block_tensor(out, l.block_n, l.block_c);
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

void infer_qmatmul(Node &n) {
  Value x = input_of(n, 0, "x"), w = input_of(n, 1, "w");
  require_dtype(x, "x", DType::kInt8);
  require_dtype(w, "w", DType::kInt8);
  const bool packed = x.layout.blocked;
  if (packed) {
    if (!w.layout.blocked) fail("packed x with unpacked w");
    x.shape = unblocked_shape(x.shape);
    w.shape = unblocked_shape(w.shape);
  }
  const int64_t G = n.attrs.get_int("groups", 1);
  if (x.rank() != 2 || w.rank() != 2 || x.shape[1] != w.shape[1] || G < 1 || x.shape[0] % G != 0 ||
      w.shape[0] % G != 0)
    fail("x {} and w {} must be [G*N,K] and [G*M,K] with groups G = {}", shape_str(x.shape),
         shape_str(w.shape), G);
  const int64_t M = w.shape[0] / G;
  check_bias(n.input(2), M);
  check_requant_attrs(n, M);
  Shape out = {x.shape[0], M};
  if (packed) {
    const int64_t bn = n.attrs.get_int("out_block_n"), bc = n.attrs.get_int("out_block_c");
    set_out(n, 0, DType::kInt8, blocked_shape(out, bn, bc));
    n.outputs[0]->layout = {true, static_cast<int>(bn), static_cast<int>(bc)};
  } else {
    set_out(n, 0, DType::kInt8, out);
  }
}

int64_t qmatmul_macs(const Node &node) {
  const Value *x = node.inputs[0];
  const int64_t K = x->layout.blocked ? unblocked_shape(x->shape)[1] : x->shape.at(1);
  const Value *out = node.outputs[0];
  const Shape plain = out->layout.blocked ? unblocked_shape(out->shape) : out->shape;
  return num_elements(plain) * K;
}

}  // namespace

void add_qmatmul_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kQMatMul,
                  .name = "vacc.QMatMul",
                  .infer = infer_qmatmul,
                  .reference = qmatmul,
                  .macs = qmatmul_macs,
                  .accel_operands = AccelOperands::kGemm});
}

}  // namespace vacc::graph::ops
