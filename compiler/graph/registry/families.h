// The operator families' graph-level parts (private to vacc_graph). Each family's def*.cc
// (compiler/ops/<family>/) defines its operators' reference kernels, shape inference and import
// rules, and registers their OpDefs (op_registry.h) in its add_*_ops function; registry.cc lists
// the families. Here: what the families' definitions share.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "vacc/graph/blocked_layout.h"
#include "vacc/graph/graph.h"
#include "vacc/graph/op_registry.h"

namespace vacc::graph::ops {

using Inputs = KernelInputs;
using Outputs = std::vector<Tensor>;

// The outputs of a kernel with one output.
inline Outputs single(Tensor t) {
  Outputs outs;
  outs.push_back(std::move(t));
  return outs;
}

// Sigmoid and HardSigmoid as their reference kernels compute them, in double; the fused gates
// of vacc.ConvNCHWc (the conv family) use the same, so that a fused graph computes what the unfused
// one does.
inline double sigmoid(double v) {
  return v >= 0 ? 1.0 / (1.0 + std::exp(-v)) : std::exp(v) / (1.0 + std::exp(v));
}
inline double hard_sigmoid(double v, double alpha, double beta) {
  return std::max(0.0, std::min(1.0, alpha * v + beta));
}
// vacc.Gelu's reference (and a fused MatMul's): 0.5 x (1 + erf(x / sqrt 2)), or its tanh
// approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
inline double gelu(double x, bool tanh_form) {
  if (tanh_form) return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

// The families (compiler/ops/<family>/def*.cc).
void add_elementwise_ops(std::vector<OpDef> &defs);    // activations, Identity, Dropout, + - * /
void add_conv_ops(std::vector<OpDef> &defs);           // Conv, ConvTranspose, integer convs
void add_conv_chain_ops(std::vector<OpDef> &defs);     // vacc.QConvChain
void add_matmul_ops(std::vector<OpDef> &defs);         // Gemm, MatMul, integer products
void add_pool_ops(std::vector<OpDef> &defs);           // Max/Average/GlobalAveragePool
void add_normalization_ops(std::vector<OpDef> &defs);  // BatchNormalization, Softmax
void add_shape_ops(std::vector<OpDef> &defs);          // reshapes, Transpose, Concat, Pad, Constant
void add_quantize_ops(std::vector<OpDef> &defs);       // (De)QuantizeLinear, Requantize, QAdd
void add_layout_ops(std::vector<OpDef> &defs);         // vacc.PackNCHWnc / UnpackNCHWnc
void add_indexing_ops(std::vector<OpDef> &defs);    // Shape, (Un)Squeeze, Gather, Slice, Range...
void add_math_ops(std::vector<OpDef> &defs);        // Tanh, Exp, Erf, Pow, Sum, Max...
void add_conv_nchwc_ops(std::vector<OpDef> &defs);  // vacc.ConvNCHWc (the CPU's blocked layout)
void add_qmatmul_ops(std::vector<OpDef> &defs);     // vacc.QMatMul
void add_reduce_ops(std::vector<OpDef> &defs);   // Reduce*, ArgMax, ArgMin, CumSum, GlobalMaxPool
void add_compare_ops(std::vector<OpDef> &defs);  // Greater, Less..., And, Or, Xor, Not
void add_activation_ops(std::vector<OpDef> &defs);  // Elu, Selu, Softplus, PRelu, Sign, IsNaN...
void add_rearrange_ops(std::vector<OpDef> &defs);   // Split, Tile, DepthToSpace, SpaceToDepth...
void add_resize_ops(std::vector<OpDef> &defs);      // Resize

// --- Shape inference helpers (registry/def_helpers.cc). Errors carry the reason only.
// Input i of n; a vacc::Error naming `role` when it is absent.
Value &input_of(Node &n, size_t i, const char *role);
// Sets output i's dtype and shape when the output is present.
void set_out(Node &n, size_t i, DType dtype, Shape shape);
void require_float(const Value &v, const char *role);
void require_dtype(const Value &v, const char *role, DType dtype);
void require_int8ish(const Value &v, const char *role);
// The constant value of input i (an input that decides a shape must be constant).
const Tensor &const_input(Node &n, size_t i, const char *role);
// A bias must be [channels].
void check_bias(const Value *b, int64_t channels);
// The dtype of the zero point at input i (ONNX's output type rule), else `fallback`.
DType zero_point_dtype(Node &n, size_t i, DType fallback);
// vacc's requantization attributes (shifts, clip_min/max) for `channels` channels.
void check_requant_attrs(Node &n, int64_t channels);
// Multiply-accumulates of a convolution or dense layer whose weight is input `w_index`: each
// output element costs the weight's elements per output channel.
int64_t weight_macs(const Node &node, size_t w_index);

// The axes a Reduce* node reduces (its constant axes input 1; none given: all, or none with
// noop_with_empty_axes), one flag per axis of its input shape x (the reduce family).
std::vector<bool> reduced_axes(const Node &node, const Shape &x);

// The sizes of a Split node's parts along its axis (its constant split input, or equal parts
// for its outputs), checked against x (the rearrange family).
std::vector<int64_t> split_sizes(const Node &node, const Shape &x);

// Resize's sampling of one axis (the resize family): for each output coordinate, `taps` input
// indices (clamped into the input) and their weights, row-major [output, tap] (zero-weight padding
// where a coordinate has fewer), and whether tf_crop_and_resize puts the coordinate outside the
// input (the output is then extrapolation_value). `identity`: every output reads its own index.
struct ResizeAxis {
  int64_t taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<bool> outside;
  bool identity = false;
};
// The node's axes, for input shape x and output shape y.
std::vector<ResizeAxis> resize_axes(const Node &node, const Shape &x, const Shape &y);

// --- Kernel helpers.
// Offsets into a (broadcast) input for each element of the output, in row-major order
// (registry/def_helpers.cc).
std::vector<int64_t> broadcast_offsets(const Shape &in, const Shape &out);

// A float convolution of plain x [N, C, S...] and w [M, C/group, K...] (the node's window and
// group), plus bias b[m] and `sum` (a fused residual, the output's shape) when given, clamped
// to the node's activation_min / activation_max (the conv family).
Tensor float_conv(const Node &node, const Tensor &x, const Tensor &w, const Tensor *b,
                  const Tensor *sum);
// A max pool fused into a QConv (graph/passes/fuse_pools.h): unpadded windows of the node's
// pool_kernel_shape at pool_strides over its plain int8 output y, and the pooled shape of an
// output of shape `conv` (the pool family).
Tensor fused_max_pool(const Node &node, const Tensor &y);
Shape fused_max_pool_shape(const Node &node, const Shape &conv);

// vacc.QAdd's arithmetic on a QConv's int8 output y and its fused residual's skip tensor (the
// node's residual_* attributes, graph/passes/fuse_residual_adds.h), both plain (the quantize
// family).
Tensor residual_add(const Node &node, const Tensor &y, const Tensor &skip);

// Fills the integer tensor `out` with value(i) (already rounded, zero point added) saturated to
// its dtype's range: the store of QuantizeLinear, QLinearConv and QLinearMatMul.
template <typename ValueOf>
void store_saturated(Tensor &out, ValueOf value) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T *po = out.data<T>();
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    for (int64_t i = 0; i < out.size(); ++i) po[i] = static_cast<T>(std::clamp(value(i), lo, hi));
  });
}

// Requantization shared by QConv, QDense and Requantize (the quantize family): for element x of
// channel c, clip(shift_right(x, shifts[c]), clip_min, clip_max) with power-of-two scales;
// with a scale ratio that is not one (an imported QDQ model's own scales), between the shift
// and the clip: v = clip(v, -pre_clip, pre_clip) * multipliers[c] >> post_shift, + zero_point
// (docs/quantization.md).
struct Requant {
  std::vector<int64_t> shifts;       // one, or one per channel
  std::vector<int64_t> multipliers;  // empty (power-of-two scales), one, or one per channel
  int32_t pre_clip = 0, post_shift = 0, zero_point = 0;
  int32_t clip_min = -128;
  int32_t clip_max = 127;
  static Requant from(const Node &node);
  int8_t apply(int32_t x, int64_t channel) const;
};

}  // namespace vacc::graph::ops
