// Data movement on the CPU: Transpose, Concat and Pad (constant, edge and reflect modes; pads must
// be constant, as vacc's static shapes require). Constant, Flatten and Reshape only relabel or
// copy bytes: they run their reference kernel on the host.
#include "ops/cpu/common.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

CpuKernel build_shape_op(const Node &node) {
  using graph::OpKind;
  KernelBuilder kb(node);
  Shape out_shape = kb.out_value().shape.empty() ? Shape{1} : kb.out_value().shape;
  int rank = static_cast<int>(kb.out_value().shape.size());
  DataType t = kb.out_type();
  Tensor out;
  switch (node.op) {
    case OpKind::kTranspose: {
      Tensor x = kb.input(0);
      std::vector<int64_t> perm = node.attrs.get_ints("perm");
      if (perm.empty()) {
        for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
      }
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        std::vector<Expr> idx(rank);
        for (int d = 0; d < rank; ++d) idx[perm[d]] = i[d];
        return (*x)(idx);
      });
      break;
    }
    case OpKind::kConcat: {
      int axis = graph::normalize_axis(node.attrs.get_int("axis", 0), rank, "axis");
      std::vector<Tensor> xs;
      for (size_t k = 0; k < node.inputs.size(); ++k) xs.push_back(kb.input(k));
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        // Select from the last input backwards: offsets are static.
        std::vector<int64_t> starts;
        int64_t off = 0;
        for (const Tensor &x : xs) {
          starts.push_back(off);
          off += x->shape()[axis];
        }
        Expr v;
        for (size_t k = 0; k < xs.size(); ++k) {
          std::vector<Expr> idx(i.begin(), i.end());
          idx[axis] = Expr(i[axis]) - static_cast<int>(starts[k]);
          Expr r = (*xs[k])(idx);
          v = v.defined() ? tir::select(Expr(i[axis]) >= static_cast<int>(starts[k]), r, v) : r;
        }
        return v;
      });
      break;
    }
    case OpKind::kPad: {
      Tensor x = kb.input(0);
      const graph::Tensor &pads_t = kb.constant(1, "pads");
      std::vector<int64_t> pads = pads_t.to_int_vector();
      if (kb.has_input(3)) kb.unsupported("the axes input");
      if (static_cast<int>(pads.size()) != 2 * rank) kb.unsupported("pads of the wrong length");
      std::string mode = node.attrs.get_string("mode", "constant");
      Expr value = kb.has_input(2) && mode == "constant" ? (*kb.input(2, {1}))({0}) : iconst(t, 0);
      const Shape &in = x->shape();
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) -> Expr {
        std::vector<Expr> idx;
        Expr cond;
        for (int d = 0; d < rank; ++d) {
          Expr j = Expr(i[d]) - static_cast<int>(pads[d]);
          int n = static_cast<int>(in[d]);
          if (mode == "edge") {
            j = tir::min(tir::max(j, 0), n - 1);
          } else if (mode == "reflect") {
            j = tir::select(j < 0, 0 - j, j);
            j = tir::select(j >= n, 2 * (n - 1) - j, j);
          } else if (mode == "constant") {
            Expr c = j >= 0 && j < n;
            cond = cond.defined() ? (cond && c) : c;
          } else {
            kb.unsupported("mode '" + mode + "'");
          }
          idx.push_back(j);
        }
        Expr v = (*x)(idx);
        return cond.defined() ? tir::select(cond, v, value) : v;
      });
      break;
    }
    default:
      VACC_CHECK(false) << "build_shape_op";
  }
  return kb.finish_elementwise(out);
}

}  // namespace

void add_shape_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kTranspose, build_shape_op});
  lowerings.push_back({graph::OpKind::kConcat, build_shape_op});
  lowerings.push_back({graph::OpKind::kPad, build_shape_op});
  // Operators that only relabel or copy bytes run their reference kernel on the host.
  lowerings.push_back({graph::OpKind::kConstant, nullptr});
  lowerings.push_back({graph::OpKind::kFlatten, nullptr});
  lowerings.push_back({graph::OpKind::kReshape, nullptr});
}

}  // namespace vacc::ops::cpu
