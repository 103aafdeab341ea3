// Helpers shared by the CPU operator definitions (private to compiler/ops/cpu).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/ops/cpu/ops.h"
#include "vacc/schedule/schedule.h"
#include "vacc/te/tensor.h"
#include "vacc/tir/func.h"
#include "vacc/tir/ops.h"

namespace vacc::ops::cpu {

using graph::Node;
using graph::Shape;
using te::Tensor;
using tir::DataType;
using tir::Expr;

DataType tir_type(graph::DType t);
Expr fconst(DataType t, double v);
// "an int8", "a float32": a type with its article, for diagnostics.
std::string a_type(DataType t);  // a float literal of type t
Expr iconst(DataType t, int64_t v);
// The intrinsic op of one operand (exp, log, abs, round...).
inline Expr call(tir::CallOp op, Expr x) {
  return tir::Call::make(op, {std::move(x)});
}
// Lowest / highest value of an integer or float type, as a literal of that type.
Expr lowest(DataType t);
Expr highest(DataType t);

// Tensors past this many elements spread their outermost loop over threads.
inline constexpr int64_t kParallelElements = 32768;
// A scalar's shape as a one-element tensor's.
inline Shape at_least_1d(Shape s) {
  return s.empty() ? Shape{1} : s;
}

// The kernel's parameters: placeholders for the node's present inputs (in order), then the
// output. `shape` may differ from the value's shape when it has the same element count.
class KernelBuilder {
 public:
  explicit KernelBuilder(const Node &node) : node_(node) {}
  const Node &node() const { return node_; }
  bool has_input(size_t i) const { return node_.input(i) != nullptr; }
  // A placeholder for input i (created once; always call in input order).
  Tensor input(size_t i, Shape shape = {});
  const graph::Value &in_value(size_t i) const;
  const graph::Value &out_value() const { return *node_.outputs.at(0); }
  DataType in_type(size_t i) const { return tir_type(in_value(i).dtype); }
  DataType out_type() const { return tir_type(out_value().dtype); }
  // The constant value of input i (for Pad's pads); fails when it is not constant.
  const graph::Tensor &constant(size_t i, const char *role) const;
  [[noreturn]] void unsupported(const std::string &why) const;
  // A host constant passed to the kernel after the node's inputs.
  Tensor constant_param(const std::string &name, graph::Tensor value);
  std::vector<graph::Tensor> take_constants() { return std::move(constants_); }

  // Lowers s with the inputs and constants created so far and `out` (one tensor per present
  // node output, in order).
  CpuKernel finish(const schedule::Schedule &s, const Tensor &out);
  CpuKernel finish(const schedule::Schedule &s, const std::vector<Tensor> &outs);
  // `out` alone, with the element-wise schedule (schedule_elementwise): the kernels that compute
  // each output element on its own.
  CpuKernel finish_elementwise(const Tensor &out);

 private:
  const Node &node_;
  std::vector<std::pair<size_t, Tensor>> inputs_;
  std::vector<Tensor> constant_tensors_;
  std::vector<graph::Tensor> constants_;
};

// The integer requantization of vacc.QConv, vacc.QDense and vacc.Requantize
// (docs/quantization.md): the int32 accumulator plus bias[c] (zero past a bias shorter than the
// channels), shifted right by one shift or one per channel c, then (an imported QDQ model's
// scales) clipped to +-pre_clip, multiplied by multipliers[c], shifted by post_shift and offset
// by the zero point, clipped to [clip_min, clip_max] and narrowed to int8. Reads the bias
// (input 2, so call it after inputs 0 and 1) when `with_bias`, and the node's attributes.
class QuantEpilogue {
 public:
  QuantEpilogue(KernelBuilder &kb, int64_t channels, bool with_bias = true);
  Expr apply(Expr acc, Expr channel) const;

 private:
  Tensor bias_, shift_, mult_;
  int64_t bias_size_ = 0, channels_ = 0, lo_ = -128, hi_ = 127;
  int64_t pre_clip_ = 0, post_shift_ = 0, zero_point_ = 0;
  bool per_channel_ = false, per_channel_mult_ = false;
};

// An element-wise CPU schedule: innermost axis vectorized (split when long), the outermost
// axes fused and parallel when the tensor is large.
void schedule_elementwise(schedule::Schedule &s, const Tensor &out);

// A reduction `acc` consumed element-wise by `out` (same axes): out is tiled by up to
// `rows` x `lanes` on its two tiled axes (row_axis, col_axis), acc is computed per tile in
// a local accumulator with its reduction loops outside the unrolled rows and vectorized
// columns; the outer loops are fused and parallel.
void schedule_reduction(schedule::Schedule &s, const Tensor &acc, const Tensor &out, int row_axis,
                        int col_axis, int64_t rows, int64_t lanes);

// The blocked NCHWnc layout ([ceil(N/bn), ceil(C/bc), S..., bn, bc]): a plain view of a
// blocked tensor (padded counts) and the blocked form of a plain one (its extents multiples
// of the blocks), each a compute stage.
Tensor unblock(const Tensor &blocked);
Tensor block(const Tensor &plain, int64_t bn, int64_t bc);

// Reads input t at the output position `axes` under NumPy broadcasting.
Expr broadcast_read(const Tensor &t, const std::vector<tir::Var> &axes);

// p xor q of two bools (tir's ne takes numbers only): Xor's kernel and Mod's sign tests.
inline Expr differ(Expr p, Expr q) {
  return (p && tir::logical_not(q)) || (tir::logical_not(p) && q);
}

// Loop IR written directly (operators whose reductions te does not express: max, arg-max,
// moments): nested loops over `extents`, one fresh variable each (named prefix0, prefix1...),
// the outermost parallel when `parallel`; `body` gets the variables as expressions.
tir::Stmt loop_nest(const std::vector<int64_t> &extents, const std::string &prefix, bool parallel,
                    const std::function<tir::Stmt(const std::vector<Expr> &)> &body);
// A Func of loop IR written directly whose parameters follow the kernel convention (ops.h): one
// buffer per present node input (`inputs`, indexed by input position; an input the kernel does
// not read gets a placeholder), then the outputs.
tir::Func direct_func(const Node &node, const std::vector<std::pair<size_t, tir::Buffer>> &inputs,
                      const std::vector<tir::Buffer> &outputs, tir::Stmt body);

// Largest divisor of n not above limit.
int64_t divisor_at_most(int64_t n, int64_t limit);
// Vector lanes for elements of type t (the host's vector width).
int64_t native_lanes(DataType t);

// Float 2-D Conv with constant weights, output channels vectorized (the conv family's
// cpu_channel_tile.cc); nullopt where its column-vectorized schedule (cpu.cc) is the better (or
// the only) one.
std::optional<CpuKernel> build_conv_channel_tile(const Node &node);
// MaxPool, AveragePool and GlobalAveragePool on a blocked (NCHWc) input (the pool family's
// cpu_nchwc.cc);
// nullopt for a plain one, or an AveragePool the blocked kernel does not compute.
std::optional<CpuKernel> build_blocked_pool(const Node &node);
// A float Conv's fused activation (graph/passes/fuse_activations.h) applied to its output
// value: clamped to activation_min / activation_max where the node has them, then times its
// gate ("silu", "hardswish") where it has one.
Expr fused_activation(const Node &node, Expr v);

// sigmoid(v) of a float, from exp(-|v|), which never overflows (Sigmoid's kernel and the fused
// SiLU's).
Expr sigmoid(const Expr &v);
// clamp(alpha v + beta, 0, 1) of a float (HardSigmoid's kernel and the fused HardSwish's).
Expr hard_sigmoid(const Expr &v, double alpha, double beta);
// GELU of a float, erf or tanh form (vacc.Gelu's kernel and a fused MatMul's; the math family).
Expr gelu(const Expr &x, bool tanh_form);

// The CPU lowering of one operator: its kernel builder, or null for an operator that only
// relabels or copies bytes (the executor runs its graph reference kernel on the host).
struct CpuLowering {
  graph::OpKind op;
  CpuKernel (*build)(const Node &node);
};

// The operator families' lowerings (compiler/ops/<family>/cpu*.cc); common.cc indexes them by
// OpKind.
void add_activation_lowerings(std::vector<CpuLowering> &lowerings);  // Elu, Selu, PRelu, IsNaN...
void add_compare_lowerings(std::vector<CpuLowering> &lowerings);     // Greater, Less, And, Not...
void add_conv_lowerings(std::vector<CpuLowering> &lowerings);        // Conv, ConvTranspose, integer
void add_conv_nchwc_lowerings(std::vector<CpuLowering> &lowerings);  // vacc.ConvNCHWc
void add_elementwise_lowerings(std::vector<CpuLowering> &lowerings);  // unary, binary, Cast, Where
void add_indexing_lowerings(std::vector<CpuLowering> &lowerings);     // Gather, Slice, Squeeze...
void add_layout_lowerings(std::vector<CpuLowering> &lowerings);       // vacc.(Un)PackNCHWnc
void add_math_lowerings(std::vector<CpuLowering> &lowerings);         // Tanh, Exp, Erf, Pow, Mod...
void add_matmul_lowerings(std::vector<CpuLowering> &lowerings);       // Gemm, MatMul, QDense...
void add_softmax_lowerings(std::vector<CpuLowering> &lowerings);     // Softmax, LogSoftmax, Hardmax
void add_batch_norm_lowerings(std::vector<CpuLowering> &lowerings);  // BatchNormalization
void add_layer_norm_lowerings(std::vector<CpuLowering> &lowerings);  // LayerNormalization
void add_pool_lowerings(std::vector<CpuLowering> &lowerings);       // Max/Average/GlobalAveragePool
void add_quantize_lowerings(std::vector<CpuLowering> &lowerings);   // (De)QuantizeLinear, QAdd...
void add_rearrange_lowerings(std::vector<CpuLowering> &lowerings);  // Split, Tile, DepthToSpace
void add_reduce_lowerings(std::vector<CpuLowering> &lowerings);     // Reduce*, ArgMax, CumSum
void add_resize_lowerings(std::vector<CpuLowering> &lowerings);     // Resize
void add_shape_lowerings(std::vector<CpuLowering> &lowerings);      // Transpose, Concat, Pad...

// A static extent as the int that loop-IR constants take (shapes are bounded at import).
inline int to_int(int64_t v) {
  return static_cast<int>(v);
}

}  // namespace vacc::ops::cpu
