// The layout transforms on the CPU: vacc.PackNCHWnc and vacc.UnpackNCHWnc ([N, C, S...] <->
// [ceil(N/bn), ceil(C/bc), S..., bn, bc], zero-filled; a windowed pack unfolds the windows into
// channels first, as the layout family's definition says).
#include "graph/window.h"
#include "ops/cpu/common.h"
#include "vacc/graph/blocked_layout.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

CpuKernel build_layout_op(const Node &node) {
  using graph::OpKind;
  KernelBuilder kb(node);
  Shape out_shape = kb.out_value().shape.empty() ? Shape{1} : kb.out_value().shape;
  int rank = static_cast<int>(kb.out_value().shape.size());
  DataType t = kb.out_type();
  Tensor out;
  switch (node.op) {
    case OpKind::kPackNCHWnc: {
      Tensor x = kb.input(0);
      const Shape &in = x->shape();
      int64_t bn = node.attrs.get_int("block_n"), bc = node.attrs.get_int("block_c");
      // With a window, channel f of the unfolded input is window tap (c, ky, kx) of channel c.
      const bool windowed = node.attrs.has("kernel_shape");
      const Shape unfolded = graph::unfolded_shape(in, node.attrs);
      graph::Window w;
      if (windowed)
        w = graph::make_window(node.attrs, {in[2], in[3]}, node.attrs.get_ints("kernel_shape"),
                               false);
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        Expr n = Expr(i[0]) * static_cast<int>(bn) + i[rank - 2];
        Expr c = Expr(i[1]) * static_cast<int>(bc) + i[rank - 1];
        Expr valid = n < static_cast<int>(unfolded[0]) && c < static_cast<int>(unfolded[1]);
        std::vector<Expr> idx = {n, c};
        if (windowed) {
          const int kh = static_cast<int>(w.kernel[0]), kw = static_cast<int>(w.kernel[1]);
          Expr tap = c % (kh * kw);
          // The replicated edges (replicate_pads) repeat the grid's first and last windows.
          const std::vector<int64_t> r = graph::replicate_pads(node.attrs);
          Expr oy = tir::min(tir::max(Expr(i[2]) - static_cast<int>(r[0]), Expr(0)),
                             Expr(static_cast<int>(w.out[0] - 1)));
          Expr ox = tir::min(tir::max(Expr(i[3]) - static_cast<int>(r[1]), Expr(0)),
                             Expr(static_cast<int>(w.out[1] - 1)));
          Expr y = oy * static_cast<int>(w.stride[0]) +
                   (tap / kw) * static_cast<int>(w.dilation[0]) - static_cast<int>(w.pad_begin[0]);
          Expr xx = ox * static_cast<int>(w.stride[1]) +
                    (tap % kw) * static_cast<int>(w.dilation[1]) - static_cast<int>(w.pad_begin[1]);
          valid = valid && y >= 0 && y < static_cast<int>(in[2]) && xx >= 0 &&
                  xx < static_cast<int>(in[3]);
          idx = {n, c / (kh * kw), y, xx};
        } else {
          for (int d = 2; d < rank - 2; ++d) idx.push_back(i[d]);
        }
        return tir::select(valid, (*x)(idx), iconst(t, 0));
      });
      break;
    }
    case OpKind::kUnpackNCHWnc: {
      Tensor x = kb.input(0);
      const Shape &bs = x->shape();
      int64_t bn = bs[bs.size() - 2], bc = bs.back();
      out = te::compute("y", out_shape, [&](const std::vector<tir::Var> &i) {
        std::vector<Expr> idx = {Expr(i[0]) / static_cast<int>(bn),
                                 Expr(i[1]) / static_cast<int>(bc)};
        for (int d = 2; d < rank; ++d) idx.push_back(i[d]);
        idx.push_back(Expr(i[0]) % static_cast<int>(bn));
        idx.push_back(Expr(i[1]) % static_cast<int>(bc));
        return (*x)(idx);
      });
      break;
    }
    default:
      VACC_CHECK(false) << "build_layout_op";
  }
  return kb.finish_elementwise(out);
}

}  // namespace

void add_layout_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kPackNCHWnc, build_layout_op});
  lowerings.push_back({graph::OpKind::kUnpackNCHWnc, build_layout_op});
}

}  // namespace vacc::ops::cpu
