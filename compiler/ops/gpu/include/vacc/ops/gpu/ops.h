// GPU operators: for each operator the GPU backend runs, its loop IR with loops bound to GPU
// blocks and threads (schedule::Stage::bind, TVM's way): compute definitions (te) with GPU
// schedules where te expresses the operator (element-wise, dense, conv2d), loop IR written
// directly for max-reductions and cross-thread reductions (pooling, softmax, layer norm).
// Every Func here also runs sequentially (interpreter, CPU backend): that meaning is the
// GPU's (codegen/gpu/ptx.h), which is how tests check the schedules without a GPU.
//
// Buffers are dense row-major float32 arrays, inputs first, then the output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/tir/func.h"

namespace vacc::ops::gpu {

// y[m, n] = sum_k a[m, k] * b[k, n] (b[n, k] when trans_b) + bias[n] (when has_bias): blocks of
// 64x64 outputs (16x16 threads, 4x4 each) whose a and b tiles go through shared memory.
tir::Func dense(int64_t m, int64_t n, int64_t k, bool trans_b, bool has_bias);

struct Conv2dShape {
  int64_t n = 1, c = 1, h = 1, w = 1;  // input
  int64_t m = 1, kh = 1, kw = 1;       // output channels, kernel
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dilation_h = 1, dilation_w = 1, groups = 1;
  int64_t out_h() const {
    return (h + pad_top + pad_bottom - dilation_h * (kh - 1) - 1) / stride_h + 1;
  }
  int64_t out_w() const {
    return (w + pad_left + pad_right - dilation_w * (kw - 1) - 1) / stride_w + 1;
  }
};
// NCHW convolution x[n, c, h, w] * w[m, c/groups, kh, kw] (+ bias[m]): each block computes a
// tile of output channels x output pixels, its weight tile staged in shared memory per block of
// input channels; each thread accumulates a register tile.
tir::Func conv2d(const Conv2dShape &s, bool has_bias);

// Max or average pooling on NCHW (average divides by the window's cells inside the input
// unless count_include_pad); one thread per output.
struct Pool2dShape {
  int64_t n = 1, c = 1, h = 1, w = 1, kh = 1, kw = 1;
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t out_h() const { return (h + pad_top + pad_bottom - kh) / stride_h + 1; }
  int64_t out_w() const { return (w + pad_left + pad_right - kw) / stride_w + 1; }
};
tir::Func max_pool2d(const Pool2dShape &s, tir::DataType t = tir::float32());
tir::Func avg_pool2d(const Pool2dShape &s, bool count_include_pad);
// y[n, c] = mean over h, w of x[n, c, h, w]: one block per (n, c) row, a tree reduction.
tir::Func global_avg_pool(int64_t n, int64_t c, int64_t hw);

// Softmax over axis 1 of x viewed as [outer, len, inner]: one block per (outer, inner) row,
// the maximum and the sum by tree reductions in shared memory. With `log`, LogSoftmax:
// x - max - log(sum).
tir::Func softmax(int64_t outer, int64_t len, int64_t inner, bool log = false);

// y = (x - mean) / sqrt(var + eps) * gamma (+ beta when has_bias) over the last axis of x
// [rows, cols]: one block per row, mean and variance by tree reductions.
tir::Func layer_norm(int64_t rows, int64_t cols, double eps, bool has_bias = true);

// Element-wise operators over n elements, one thread per element.
enum class Unary { kRelu, kSigmoid, kTanh, kGelu, kGeluTanh, kExp, kSoftplus, kSoftsign };
tir::Func unary(Unary op, int64_t n);
enum class Binary { kAdd, kSub, kMul, kDiv, kMax, kMin };
// y[o, j, i] = a[o, j, i] op b[j]: a and y viewed as [outer, b_n, inner], b broadcast along the
// outer and inner axes (same shapes: outer = inner = 1; a scalar b: b_n = 1).
tir::Func binary(Binary op, int64_t outer, int64_t b_n, int64_t inner);

// The GPU kernel of a graph node, when the GPU backend has one (float32 Conv 2-D, Gemm,
// MatMul 2-D, MaxPool/AveragePool 2-D, GlobalAveragePool, Softmax, LayerNormalization over
// trailing axes, Relu, Sigmoid, Tanh, Exp, vacc.Gelu, Add/Sub/Mul/Div with a broadcast of the
// second operand along one axis range); false otherwise.
// The kernel's parameters follow ops/cpu: present inputs in order, then constants, then the
// output.
struct GpuNodeKernel {
  tir::Func func;
  std::vector<graph::Tensor> constants;
};
bool build_node_kernel(const graph::Node &node, GpuNodeKernel *out, std::string *why);

}  // namespace vacc::ops::gpu
