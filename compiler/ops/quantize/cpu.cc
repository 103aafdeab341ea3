// Quantization operators: QuantizeLinear / DequantizeLinear (per tensor or per axis) in double
// as the reference computes them, and vacc's integer requantization (vacc.Requantize,
// vacc.QAdd) with exactly the accelerator ALU's semantics: wrapping int32 adds, the ISA's shift
// (a negative amount shifts left), min/max clipping, a truncating int8 store.
#include "ops/cpu/common.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {

CpuKernel build_quantize(const Node &node) {
  using graph::OpKind;
  KernelBuilder kb(node);
  const graph::Value &xv = kb.in_value(0);
  Shape shape = xv.shape.empty() ? Shape{1} : xv.shape;
  int rank = static_cast<int>(shape.size());
  DataType ot = kb.out_type(), f64 = DataType::float_(64), i32 = tir::int32();
  Tensor x = kb.input(0, shape);
  Tensor out;
  auto all = [](const std::vector<tir::Var> &i) { return std::vector<Expr>(i.begin(), i.end()); };
  switch (node.op) {
    case OpKind::kQuantizeLinear:
    case OpKind::kDequantizeLinear: {
      int64_t ns = graph::num_elements(kb.in_value(1).shape);
      Tensor scale = kb.input(1, {ns});
      Tensor zp =
          kb.has_input(2) ? kb.input(2, {graph::num_elements(kb.in_value(2).shape)}) : nullptr;
      int axis = ns > 1 ? graph::normalize_axis(node.attrs.get_int("axis", 1),
                                                static_cast<int>(xv.rank()), "axis")
                        : 0;
      if (ns > 1 && shape[axis] != ns) kb.unsupported("a per-axis parameter of the wrong length");
      bool quant = node.op == OpKind::kQuantizeLinear;
      if (quant && !tir_type(xv.dtype).is_float()) kb.unsupported("a non-float input");
      out = te::compute("y", shape, [&](const std::vector<tir::Var> &i) -> Expr {
        Expr k = ns > 1 ? Expr(i[axis]) : Expr(0);
        Expr s = tir::cast(f64, (*scale)({k}));
        Expr z = zp ? tir::cast(f64, (*zp)({zp->shape()[0] > 1 ? k : Expr(0)})) : fconst(f64, 0);
        Expr v = (*x)(all(i));
        if (quant) {
          // The quotient in x's type, as ONNX computes it (float32's rounding decides halves).
          Expr q = tir::cast(f64, v) / s;
          if (v.dtype() != f64) q = tir::cast(f64, tir::cast(v.dtype(), q));
          Expr r = tir::Call::make(tir::CallOp::kRound, {q}) + z;
          r = tir::min(tir::max(r, tir::cast(f64, lowest(ot))), tir::cast(f64, highest(ot)));
          return tir::cast(ot, r);
        }
        Expr zi = zp ? tir::cast(tir::int64(), (*zp)({zp->shape()[0] > 1 ? k : Expr(0)}))
                     : iconst(tir::int64(), 0);
        return tir::cast(ot, tir::cast(f64, tir::cast(tir::int64(), v) - zi) * s);
      });
      break;
    }
    case OpKind::kRequantize: {
      const QuantEpilogue requant(kb, rank >= 2 ? shape[1] : 1, /*with_bias=*/false);
      out = te::compute("y", shape, [&](const std::vector<tir::Var> &i) {
        return requant.apply((*x)(all(i)), rank >= 2 ? Expr(i[1]) : Expr(0));
      });
      break;
    }
    case OpKind::kQAdd: {
      Tensor b = kb.input(1, shape);
      int64_t la = node.attrs.get_int("lshift_a", 0), lb = node.attrs.get_int("lshift_b", 0);
      int64_t rs = node.attrs.get_int("rshift", 0);
      int64_t lo = node.attrs.get_int("clip_min", -128), hi = node.attrs.get_int("clip_max", 127);
      int64_t round = rs > 0 ? (int64_t{1} << (rs - 1)) : 0;
      out = te::compute("y", shape, [&](const std::vector<tir::Var> &i) {
        Expr va = tir::cast(i32, (*x)(all(i))) >> iconst(i32, -la);
        Expr vb = tir::cast(i32, (*b)(all(i))) >> iconst(i32, -lb);
        Expr v = (va + vb + iconst(i32, round)) >> iconst(i32, rs);
        v = tir::min(tir::max(v, iconst(i32, lo)), iconst(i32, hi));
        return tir::cast(tir::int8(), v);
      });
      break;
    }
    default:
      VACC_CHECK(false) << "build_quantize";
  }
  return kb.finish_elementwise(out);
}

void add_quantize_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kQuantizeLinear, build_quantize});
  lowerings.push_back({graph::OpKind::kDequantizeLinear, build_quantize});
  lowerings.push_back({graph::OpKind::kRequantize, build_quantize});
  lowerings.push_back({graph::OpKind::kQAdd, build_quantize});
}

}  // namespace vacc::ops::cpu
