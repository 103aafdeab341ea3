// Weight rounding guided by the layer's inputs (`--rounding hessian`): instead of rounding each
// int8 weight to the nearest level of its channel's power-of-two grid, a layer's weights are
// rounded one input at a time and each rounding error is fed back onto the weights not yet
// rounded, weighted by the inverse of the Hessian of the layer's squared output error,
// H = sum over the calibration data of x x^T (x: the layer's input, one window of a convolution
// unfolded). This is the optimal-brain-quantization update as GPTQ (Frantar et al. 2022)
// computes it: for input k, with U the upper Cholesky factor of H^-1,
//     e = (w_k - q_k) / U[k][k];  w_j -= e * U[k][j]  for every j > k,
// which keeps the layer's output on the calibration data closer to the float layer's than
// nearest rounding does. The grid (each output channel's fraction bits) is the nearest
// rounding's; only which level each weight takes changes, so the int8 graph runs as before.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "vacc/graph/graph.h"

namespace vacc::graph {

// One layer's input Hessian: per group (a grouped convolution's groups; 1 otherwise) a k x k
// matrix (row-major, float) summed over every input window of the calibration data.
struct InputHessian {
  int64_t groups = 1, k = 0;
  std::vector<float> h;  // groups * k * k
  // The inputs themselves where a group has at most k / 2 of them (h = X^T X then has rank n,
  // and a product with h costs less through X): per group n rows of k, row-major. n = 0 where
  // there are more.
  int64_t n = 0;
  std::vector<float> inputs;  // groups * n * k
};
// By node name.
using InputHessians = std::unordered_map<std::string, InputHessian>;

// The input Hessians of every 2-D convolution and dense layer (Gemm, MatMul by a constant) of
// the float graph with constant weights, over `batches` (run on the reference executor). A layer
// whose Hessians would take more than `max_layer_bytes` is left out (it keeps nearest rounding).
// With `keep_inputs` (for learned rounding), a layer with at most k / 2 inputs per group keeps
// them too (InputHessian::inputs).
InputHessians input_hessians(const Graph &graph, const std::vector<std::vector<Tensor>> &batches,
                             bool keep_inputs = false, size_t max_layer_bytes = size_t{256} << 20);

// Rounds weights w ([O, ...]: output channel first, then the layer's inputs in the order of the
// Hessian's rows, groups * k per channel block of O / groups channels) onto the int8 grids
// 2^-frac_bits[o], with the error feedback above. Returns the int8 weights, shaped as w.
Tensor round_weights(const Tensor &w, const std::vector<int> &frac_bits, const InputHessian &h);

}  // namespace vacc::graph
