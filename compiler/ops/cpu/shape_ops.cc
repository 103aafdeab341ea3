// Data-movement operators: Transpose, Concat, Gather, Slice, Pad (constant, edge and reflect modes;
// pads must be constant, as vacc's static shapes require) and the vacc.PackNCHWnc /
// vacc.UnpackNCHWnc layout transforms ([N, C, S...] <-> [ceil(N/bn), ceil(C/bc), S..., bn, bc],
// zero-filled; a windowed pack unfolds the windows into channels first, as graph/ops/layout.cc
// says).
#include "vacc/graph/blocked_layout.h"
#include "../../graph/window.h"
#include "common.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/graph/slice.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {

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
      VACC_CHECK(false) << "build_shape_op";
  }
  schedule::Schedule s({out});
  schedule_elementwise(s, out);
  return kb.finish(s, out);
}

void add_shape_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kTranspose, build_shape_op});
  lowerings.push_back({graph::OpKind::kConcat, build_shape_op});
  lowerings.push_back({graph::OpKind::kPad, build_shape_op});
  lowerings.push_back({graph::OpKind::kPackNCHWnc, build_shape_op});
  lowerings.push_back({graph::OpKind::kUnpackNCHWnc, build_shape_op});
  lowerings.push_back({graph::OpKind::kGather, build_shape_op});
  lowerings.push_back({graph::OpKind::kSlice, build_shape_op});
  // Operators that only relabel or copy bytes run their reference kernel on the host.
  lowerings.push_back({graph::OpKind::kConstant, nullptr});
  lowerings.push_back({graph::OpKind::kIdentity, nullptr});
  lowerings.push_back({graph::OpKind::kDropout, nullptr});
  lowerings.push_back({graph::OpKind::kFlatten, nullptr});
  lowerings.push_back({graph::OpKind::kReshape, nullptr});
  lowerings.push_back({graph::OpKind::kSqueeze, nullptr});
  lowerings.push_back({graph::OpKind::kUnsqueeze, nullptr});
  // Always folded at import (their inputs decide their shapes), never a kernel.
  lowerings.push_back({graph::OpKind::kShape, nullptr});
  lowerings.push_back({graph::OpKind::kSize, nullptr});
  lowerings.push_back({graph::OpKind::kConstantOfShape, nullptr});
  lowerings.push_back({graph::OpKind::kRange, nullptr});
}

}  // namespace vacc::ops::cpu
