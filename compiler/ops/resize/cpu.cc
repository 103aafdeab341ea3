// Resize on the CPU: each sampled axis's taps (graph/ops resize_axes: input index and weight per
// output coordinate and tap, and whether tf_crop_and_resize puts the coordinate outside) are
// passed as constant tables; the output element is the weighted sum over every combination of
// its axes' taps (nearest: the one tap's element, copied), or extrapolation_value outside.
#include "graph/registry/families.h"
#include "ops/cpu/common.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

CpuKernel build_resize(const Node &node) {
  KernelBuilder kb(node);
  const Shape xs = kb.in_value(0).shape, ys = kb.out_value().shape;
  const DataType t = kb.out_type();
  const std::vector<graph::ops::ResizeAxis> axes = graph::ops::resize_axes(node, xs, ys);
  const int rank = static_cast<int>(xs.size());
  Tensor x = kb.input(0);
  struct Table {
    int axis;
    int64_t taps;
    Tensor index, weight, outside;
  };
  std::vector<Table> tables;
  int64_t combos = 1;
  bool any_outside = false;
  for (int d = 0; d < rank; ++d) {
    const graph::ops::ResizeAxis &a = axes[d];
    for (bool o : a.outside) any_outside |= o;
    if (a.identity) continue;
    Table tb{d, a.taps, nullptr, nullptr, nullptr};
    const std::vector<int32_t> index(a.index.begin(), a.index.end());
    tb.index = kb.constant_param("index" + std::to_string(d),
                                 graph::Tensor::from_vector<int32_t>({ys[d], a.taps}, index));
    if (t.is_float()) {
      const std::vector<float> weight(a.weight.begin(), a.weight.end());
      tb.weight = kb.constant_param("weight" + std::to_string(d),
                                    graph::Tensor::from_vector<float>({ys[d], a.taps}, weight));
    }
    combos *= a.taps;
    tables.push_back(tb);
  }
  // Which output coordinates fall outside the crop, per axis (tf_crop_and_resize).
  std::vector<Tensor> outside(rank);
  if (any_outside) {
    for (int d = 0; d < rank; ++d) {
      std::vector<uint8_t> o(axes[d].outside.begin(), axes[d].outside.end());
      outside[d] = kb.constant_param("outside" + std::to_string(d),
                                     graph::Tensor::from_vector<uint8_t>({ys[d]}, o));
    }
  }
  const double extrapolation = node.attrs.get_float("extrapolation_value", 0.0f);
  Tensor out = te::compute("y", ys, [&](const std::vector<tir::Var> &v) -> Expr {
    Expr sum;
    for (int64_t c = 0; c < combos; ++c) {
      std::vector<Expr> idx(v.begin(), v.end());
      Expr w;
      int64_t rest = c;
      for (const Table &tb : tables) {
        const int k = static_cast<int>(rest % tb.taps);
        rest /= tb.taps;
        idx[tb.axis] = (*tb.index)({v[tb.axis], k});
        if (tb.weight)
          w = w.defined() ? w * (*tb.weight)({v[tb.axis], k}) : (*tb.weight)({v[tb.axis], k});
      }
      Expr term = (*x)(idx);
      if (w.defined()) term = term * w;
      sum = sum.defined() ? sum + term : term;
    }
    if (!any_outside) return sum;
    Expr out_of_crop;
    for (int d = 0; d < rank; ++d) {
      Expr o = tir::ne((*outside[d])({v[d]}), iconst(tir::uint8(), 0));
      out_of_crop = out_of_crop.defined() ? out_of_crop || o : o;
    }
    return tir::select(out_of_crop, fconst(t, extrapolation), sum);
  });
  VACC_CHECK(t.is_float() || combos == 1) << "Resize interpolates integers only by nearest";
  return kb.finish_elementwise(out);
}

}  // namespace

void add_resize_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kResize, build_resize});
}

}  // namespace vacc::ops::cpu
