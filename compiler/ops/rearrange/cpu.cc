// Operators that move elements on the CPU: Split (one output per part; sizes as the graph's
// split_sizes gives them), Tile, DepthToSpace (DCR and CRD), SpaceToDepth and Trilu. Each output
// element reads one input element (Trilu: or is zero), an index computation written per operator
// here independently of the graph's reference kernels.
#include "graph/registry/families.h"
#include "ops/cpu/common.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

using graph::OpKind;

CpuKernel build_split(const Node &node) {
  KernelBuilder kb(node);
  const Shape xs = kb.in_value(0).shape;
  const int axis =
      graph::normalize_axis(node.attrs.get_int("axis", 0), static_cast<int>(xs.size()), "axis");
  const std::vector<int64_t> sizes = graph::ops::split_sizes(node, xs);
  Tensor x = kb.input(0);
  std::vector<Tensor> outs;
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (node.outputs[k]) {
      Shape s = xs;
      s[axis] = sizes[k];
      outs.push_back(te::compute("y" + std::to_string(k), s, [&](const std::vector<tir::Var> &i) {
        std::vector<Expr> idx(i.begin(), i.end());
        idx[axis] = idx[axis] + static_cast<int>(offset);
        return (*x)(idx);
      }));
    }
    offset += sizes[k];
  }
  schedule::Schedule s(outs);
  for (const Tensor &t : outs) schedule_elementwise(s, t);
  return kb.finish(s, outs);
}

CpuKernel build_rearrange(const Node &node) {
  KernelBuilder kb(node);
  const Shape xs = kb.in_value(0).shape;
  const Shape &ys = kb.out_value().shape;
  const DataType t = kb.out_type();
  Tensor x = kb.input(0);
  const int rank = static_cast<int>(ys.size());
  const int b = static_cast<int>(node.attrs.get_int("blocksize", 1));
  int64_t k = 0;
  if (node.op == OpKind::kTrilu && kb.has_input(1)) k = kb.constant(1, "k").as_int(0);
  const bool upper = node.attrs.get_int("upper", 1) != 0;
  const bool crd = node.attrs.get_string("mode", "DCR") == "CRD";
  Tensor out = te::compute("y", ys, [&](const std::vector<tir::Var> &v) -> Expr {
    std::vector<Expr> y(v.begin(), v.end());
    switch (node.op) {
      case OpKind::kTile: {
        std::vector<Expr> idx;
        for (int d = 0; d < rank; ++d)
          idx.push_back(xs[d] == ys[d] ? y[d] : y[d] % static_cast<int>(xs[d]));
        return (*x)(idx);
      }
      case OpKind::kDepthToSpace: {
        const int c_out = static_cast<int>(xs[1]) / (b * b);
        Expr i = y[2] % b, j = y[3] % b;
        Expr channel = crd ? (y[1] * b + i) * b + j : (i * b + j) * c_out + y[1];
        return (*x)({y[0], channel, y[2] / b, y[3] / b});
      }
      case OpKind::kSpaceToDepth: {
        const int c_in = static_cast<int>(xs[1]);
        Expr tap = y[1] / c_in;
        return (*x)({y[0], y[1] % c_in, y[2] * b + tap / b, y[3] * b + tap % b});
      }
      default: {  // Trilu
        Expr diagonal = y[rank - 1] - y[rank - 2];
        Expr keep = upper ? diagonal >= static_cast<int>(k) : diagonal <= static_cast<int>(k);
        return tir::select(keep, (*x)(y), iconst(t, 0));
      }
    }
  });
  return kb.finish_elementwise(out);
}

}  // namespace

void add_rearrange_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({OpKind::kSplit, build_split});
  for (OpKind op : {OpKind::kTile, OpKind::kDepthToSpace, OpKind::kSpaceToDepth, OpKind::kTrilu})
    lowerings.push_back({op, build_rearrange});
}

}  // namespace vacc::ops::cpu
