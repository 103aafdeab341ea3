// Compute definitions: placeholders (DRAM inputs), element-wise computes and sum reductions,
// each producing one tensor. Bodies are loop-IR expressions that read other tensors with
// `t(i, j)` (a Load of the tensor's buffer); iteration axes are IterVars whose variables the
// schedule splits, reorders and binds.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vacc/tir/node.h"
#include "vacc/tir/ops.h"

namespace vacc::te {

// One iteration axis [0, extent). `reduce` marks a sum-reduction axis.
struct IterVarNode {
  tir::Var var;
  int64_t extent = 1;
  bool reduce = false;
};
using IterVar = std::shared_ptr<const IterVarNode>;
IterVar make_iter_var(const std::string &name, int64_t extent, bool reduce);

struct OperationNode;
using Tensor = std::shared_ptr<const OperationNode>;

// A placeholder (no body) or a compute: out[axes] = body, or out[axes] = sum over
// reduce_axes of body when reduce_axes is non-empty.
struct OperationNode {
  std::string name;
  tir::Buffer buffer;  // the tensor's full-shape global buffer
  bool placeholder = false;
  std::vector<IterVar> axes;
  std::vector<IterVar> reduce_axes;
  tir::Expr body;
  std::vector<Tensor> inputs;  // tensors the body reads, in order of first read

  const std::vector<int64_t> &shape() const { return buffer->shape; }
  tir::DataType dtype() const { return buffer->dtype; }
  // Reads this tensor: a Load of its buffer.
  tir::Expr operator()(std::vector<tir::Expr> indices) const;
};

Tensor placeholder(const std::string &name, std::vector<int64_t> shape, tir::DataType t);

using ComputeFn = std::function<tir::Expr(const std::vector<tir::Var> &axes)>;
using ReduceFn = std::function<tir::Expr(const std::vector<tir::Var> &axes,
                                         const std::vector<tir::Var> &reduce_axes)>;

// axis_names may be empty (i0, i1, ...). The body's type must be the tensor's type.
Tensor compute(const std::string &name, std::vector<int64_t> shape, const ComputeFn &fn,
               std::vector<std::string> axis_names = {});
// out[axes] = sum over the reduce axes of fn(axes, reduce_axes); the sum has fn's type.
Tensor reduce_sum(const std::string &name, std::vector<int64_t> shape,
                  std::vector<std::pair<std::string, int64_t>> reduce_axes, const ReduceFn &fn,
                  std::vector<std::string> axis_names = {});

// A copy of `op` with a new body (same axes, buffer and name); inputs are recomputed.
Tensor with_body(const Tensor &op, tir::Expr body);
// A compute with fresh axes whose body is `body_fn`, used for cache stages.
Tensor make_compute(const std::string &name, tir::Buffer buffer, std::vector<IterVar> axes,
                    std::vector<IterVar> reduce_axes, tir::Expr body);

// The tensor that owns `buffer` (registered by placeholder/compute), or null.
Tensor tensor_of(const tir::BufferNode *buffer);

}  // namespace vacc::te
