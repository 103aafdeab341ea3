// The reference kernels of the executor, one function per operator family. Each takes the
// node (attributes, inferred output shapes) and its input tensors (nullptr where an optional
// input is absent) and returns the node's outputs.
#pragma once

#include <vector>

#include "vacc/graph/graph.h"

namespace vacc::graph::kernels {

using Inputs = std::vector<const Tensor *>;
using Outputs = std::vector<Tensor>;

// elementwise.cc
Outputs unary(const Node &node, const Inputs &in);   // Relu, LeakyRelu, Sigmoid, Clip, Identity
Outputs binary(const Node &node, const Inputs &in);  // Add, Sub, Mul, Div
Outputs dropout(const Node &node, const Inputs &in);
// conv.cc
Outputs conv(const Node &node, const Inputs &in);
Outputs conv_integer(const Node &node, const Inputs &in);
Outputs qlinear_conv(const Node &node, const Inputs &in);
Outputs qconv(const Node &node, const Inputs &in);
Outputs conv_transpose(const Node &node, const Inputs &in);
// matmul.cc
Outputs gemm(const Node &node, const Inputs &in);
Outputs matmul(const Node &node, const Inputs &in);
Outputs matmul_integer(const Node &node, const Inputs &in);
Outputs qlinear_matmul(const Node &node, const Inputs &in);
Outputs qdense(const Node &node, const Inputs &in);
// pool.cc
Outputs max_pool(const Node &node, const Inputs &in);
Outputs average_pool(const Node &node, const Inputs &in);
Outputs global_average_pool(const Node &node, const Inputs &in);
// normalization.cc
Outputs batch_norm(const Node &node, const Inputs &in);
Outputs softmax(const Node &node, const Inputs &in);
// shape_ops.cc
Outputs reshape_like(const Node &node, const Inputs &in);  // Flatten, Reshape
Outputs transpose(const Node &node, const Inputs &in);
Outputs concat(const Node &node, const Inputs &in);
Outputs pad(const Node &node, const Inputs &in);
// quantize.cc
Outputs quantize_linear(const Node &node, const Inputs &in);
Outputs dequantize_linear(const Node &node, const Inputs &in);
Outputs requantize(const Node &node, const Inputs &in);
Outputs qadd(const Node &node, const Inputs &in);
// vacc.QAdd's arithmetic on a QConv's int8 output y and its fused residual's skip tensor (the
// node's residual_* attributes, graph/passes/fuse_residual_adds.h), both plain.
Tensor residual_add(const Node &node, const Tensor &y, const Tensor &skip);
// layout.cc
Outputs pack_nchwnc(const Node &node, const Inputs &in);
Outputs unpack_nchwnc(const Node &node, const Inputs &in);

// Helpers shared by the kernels (layout.cc).
Tensor block_tensor(const Tensor &plain, int64_t block_n, int64_t block_c);
Tensor unblock_tensor(const Tensor &blocked, const Shape &plain_shape);
// The plain NC... shape whose blocked form is `blocked` (padded channel/batch counts).
Shape unblocked_shape(const Shape &blocked);
Shape blocked_shape(const Shape &plain, int64_t block_n, int64_t block_c);
// A windowed pack's unfolded (im2col) [N, C*kh*kw, OH, OW] form of x (x itself without a
// kernel_shape attribute), and the unfolding.
Shape unfolded_shape(const Shape &x, const Attributes &attrs);
Tensor unfold_windows(const Tensor &x, const Attributes &attrs);

// Requantization shared by QConv, QDense and Requantize: for element x of channel c,
// clip(shift_right(x, shifts[c]), clip_min, clip_max) (docs/quantization.md).
struct Requant {
  std::vector<int64_t> shifts;  // one, or one per channel
  int32_t clip_min = -128;
  int32_t clip_max = 127;
  static Requant from(const Node &node);
  int8_t apply(int32_t x, int64_t channel) const;
};

}  // namespace vacc::graph::kernels
