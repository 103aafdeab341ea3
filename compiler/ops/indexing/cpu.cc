// Indexing on the CPU: Gather (indices read at run time) and Slice (static starts and steps).
// Squeeze and Unsqueeze only relabel bytes (reference kernel on the host); Shape, Size,
// ConstantOfShape and Range are always folded at import.
#include "ops/cpu/common.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/graph/slice.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

CpuKernel build_indexing_op(const Node &node) {
  using graph::OpKind;
  KernelBuilder kb(node);
  Shape out_shape = kb.out_value().shape.empty() ? Shape{1} : kb.out_value().shape;
  int rank = static_cast<int>(kb.out_value().shape.size());
  Tensor out;
  switch (node.op) {
    case OpKind::kGather: {
      // Indices are read at run time; one out of range reads a clamped element (the reference
      // executor reports it).
      Tensor x = kb.input(0), idx = kb.input(1);
      const int xr = static_cast<int>(kb.in_value(0).shape.size());
      const int ir = static_cast<int>(kb.in_value(1).shape.size());
      const int axis = graph::normalize_axis(node.attrs.get_int("axis", 0), xr, "axis");
      const int n = static_cast<int>(kb.in_value(0).shape[axis]);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        std::vector<Expr> ii;
        for (int d = 0; d < ir; ++d) ii.push_back(i[axis + d]);
        if (ii.empty()) ii.push_back(0);
        Expr k = tir::cast(tir::int32(), (*idx)(ii));
        k = tir::select(k < 0, k + n, k);
        k = tir::min(tir::max(k, 0), n - 1);
        std::vector<Expr> xi;
        for (int d = 0; d < axis; ++d) xi.push_back(i[d]);
        xi.push_back(k);
        for (int d = axis + 1; d < xr; ++d) xi.push_back(i[d - 1 + ir]);
        return (*x)(xi);
      });
      break;
    }
    case OpKind::kSlice: {
      Tensor x = kb.input(0);
      const std::vector<graph::SliceAxis> axes = graph::slice_axes(node);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        std::vector<Expr> idx;
        for (int d = 0; d < rank; ++d) {
          idx.push_back(Expr(i[d]) * static_cast<int>(axes[d].step) +
                        static_cast<int>(axes[d].start));
        }
        return (*x)(idx);
      });
      break;
    }
    default:
      VACC_CHECK(false) << "build_indexing_op";
  }
  return kb.finish_elementwise(out);
}

}  // namespace

void add_indexing_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kGather, build_indexing_op});
  lowerings.push_back({graph::OpKind::kSlice, build_indexing_op});
  lowerings.push_back({graph::OpKind::kSqueeze, nullptr});
  lowerings.push_back({graph::OpKind::kUnsqueeze, nullptr});
  // Always folded at import (their inputs decide their shapes), never a kernel.
  lowerings.push_back({graph::OpKind::kShape, nullptr});
  lowerings.push_back({graph::OpKind::kSize, nullptr});
  lowerings.push_back({graph::OpKind::kConstantOfShape, nullptr});
  lowerings.push_back({graph::OpKind::kRange, nullptr});
}

}  // namespace vacc::ops::cpu
