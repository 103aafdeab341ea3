// CPU operators: for each graph operator that computes (everything but the shape-only ones),
// a compute definition (te) plus a CPU schedule (tiling, a register accumulator tile,
// unroll, vectorize, parallel), lowered to loop IR for the CPU backend (codegen/cpu).
//
// A node's kernel takes one buffer per present node input, in input order, then one per
// constant the kernel adds (e.g. per-channel shift amounts from attributes), then one per
// present node output, in order; buffers are the tensors' row-major bytes (kernels may view them
// with unit dimensions added, e.g. a 1-D convolution as 3-D). Float32 is the float type; integer
// operators use the types ONNX gives them (int8/uint8 inputs, int32 accumulators).
#pragma once

#include <string>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/tir/func.h"

namespace vacc::ops::cpu {

// True for the operators the CPU executor runs without a kernel, with their graph reference
// kernel: Constant, Identity, Dropout (inference), Flatten, Reshape, Squeeze and Unsqueeze
// only relabel or copy bytes (and Shape, ConstantOfShape, Range fold at import).
bool is_host_op(graph::OpKind op);

// The loop-IR kernel of `node`, from its attributes and its inputs' and output's types and
// shapes (and, for Pad, its constant pads). An operator, dtype or attribute the CPU backend
// does not support is a vacc::Error naming the node and the op.
struct CpuKernel {
  tir::Func func;
  std::vector<graph::Tensor> constants;  // passed after the node's inputs
};
CpuKernel build_kernel(const graph::Node &node);

}  // namespace vacc::ops::cpu
