// Helpers shared by the GPU operator definitions (private to compiler/ops/gpu).
#pragma once

#include <string>
#include <vector>

#include "vacc/ops/gpu/ops.h"
#include "vacc/schedule/schedule.h"
#include "vacc/te/tensor.h"
#include "vacc/tir/ops.h"

namespace vacc::ops::gpu {

using graph::Node;
using graph::OpKind;
using te::Tensor;
using tir::DataType;
using tir::Expr;

inline constexpr int64_t kThreads = 256;  // threads per block of the one-dimensional kernels

Expr f32(double v);

// All axes of `out` fused, split by kThreads, bound to blockIdx.x and threadIdx.x (the last
// block guards the tail).
void schedule_flat(schedule::Schedule &s, const Tensor &out);

// The 2-D thread block of the tiled kernels (dense, conv2d): kTile x kTile threads.
inline constexpr int64_t kTile = 16;

// Schedules a cache_read copy into shared memory loaded cooperatively by a kTile x kTile block:
// its axes fused, split by the block's threads, the thread part outermost and bound to
// threadIdx.y/x, so consecutive threads read consecutive addresses.
void cooperative_copy(schedule::Schedule &s, const Tensor &copy);

// A flat loop nest over n elements: blockIdx.x and threadIdx.x over ceil(n / threads) x threads
// with body(index) guarded by index < n.
tir::Stmt flat_loops(int64_t n, const std::function<tir::Stmt(Expr)> &body);

// Threads of a one-block-per-row reduction over `len` elements: a power of two up to kThreads.
int64_t reduction_threads(int64_t len);

// A cooperative reduction among `threads` threads (a power of two) of one block:
// red[t] = combine over i of value(t + threads * i) for the indices below len, then a tree in
// shared memory; afterwards red[0] holds the result. `combine` is max or +; `init` its
// identity. Every step is its own threadIdx loop (a phase).
tir::Stmt block_reduce(const tir::Buffer &red, int64_t threads, int64_t len, Expr init,
                       const std::function<Expr(Expr, Expr)> &combine,
                       const std::function<Expr(Expr)> &value);

// The GPU kernel of one operator's nodes, as ops/cpu's table: `build` fills the kernel and
// returns "", or returns why this node does not fit the GPU kernel (its caller then runs the node
// on the CPU backend). Called only for nodes whose operands are all float32.
struct GpuLowering {
  OpKind op;
  std::string (*build)(const Node &node, GpuNodeKernel *kernel);
};

// A node's kernel as the element-wise unary operator `op` over its output's elements (the
// families' one-operand nodes).
std::string unary_node_kernel(Unary op, const Node &node, GpuNodeKernel *k);

// The operator families' GPU kernels (compiler/ops/<family>/gpu*.cc); node_kernels.cc indexes
// them by OpKind.
void add_activation_node_kernels(std::vector<GpuLowering> &lowerings);     // Softplus, Softsign
void add_conv_node_kernels(std::vector<GpuLowering> &lowerings);           // Conv 2-D
void add_elementwise_node_kernels(std::vector<GpuLowering> &lowerings);    // Relu, Sigmoid, + - * /
void add_math_node_kernels(std::vector<GpuLowering> &lowerings);           // Tanh, Exp, Gelu
void add_matmul_node_kernels(std::vector<GpuLowering> &lowerings);         // Gemm, MatMul 2-D
void add_normalization_node_kernels(std::vector<GpuLowering> &lowerings);  // Softmax, LayerNorm
void add_pool_node_kernels(std::vector<GpuLowering> &lowerings);           // Max/Avg/GlobalAvgPool

}  // namespace vacc::ops::gpu
