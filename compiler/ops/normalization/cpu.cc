// Softmax, LogSoftmax and Hardmax along one axis (opset 13) or over the coerced 2-D view (older
// opsets): per row, the maximum (and, for Hardmax, where it first occurs), then exp(x - max) with
// a float64 running sum (as the reference), then the division (Softmax) or x - max - log(sum)
// (LogSoftmax); Hardmax writes 1 at the first maximum and 0 elsewhere.
// A max-reduction has no compute form in te, so the loop nest is written directly in loop IR:
// rows are parallel, the three passes over a row are serial loops.
#include "ops/cpu/common.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"
#include "vacc/tir/node.h"

namespace vacc::ops::cpu {

CpuKernel build_softmax(const Node &node) {
  KernelBuilder kb(node);
  const graph::Value &xv = kb.in_value(0);
  DataType t = tir_type(xv.dtype);
  if (t != tir::float32()) kb.unsupported(a_type(t) + " input (float32 only)");
  bool coerce = node.attrs.get_int("coerce_2d", 0) != 0;
  int rank = std::max(1, xv.rank());
  int axis = graph::normalize_axis(node.attrs.get_int("axis", -1), rank, "axis", coerce);
  int64_t outer = 1, len = 1, inner = 1;
  for (int i = 0; i < xv.rank(); ++i) {
    if (i < axis)
      outer *= xv.shape[i];
    else if (i == axis || coerce)
      len *= xv.shape[i];
    else
      inner *= xv.shape[i];
  }
  using namespace tir;
  DataType f64 = DataType::float_(64);
  Buffer x = make_buffer("x", t, {outer, len, inner});
  Buffer y = make_buffer("y", t, {outer, len, inner});
  Buffer mx = make_buffer("mx", t, {1}, Scope::kLocal);
  Buffer sum = make_buffer("sum", f64, {1}, Scope::kLocal);
  Var o = make_var("o"), i = make_var("i"), l = make_var("l");
  auto X = [&](Expr li) { return load(x, {o, li, i}); };
  Stmt max_pass = Seq::make(
      {Store::make(mx, {0}, X(0)),
       For::make(l, len, ForKind::kSerial, Store::make(mx, {0}, max(load(mx, {0}), X(l))))});
  Var l2 = make_var("l"), l3 = make_var("l");
  Stmt row;
  if (node.op == graph::OpKind::kHardmax) {
    Buffer at = make_buffer("at", int32(), {1}, Scope::kLocal);
    Stmt find = Seq::make(
        {Store::make(mx, {0}, X(0)), Store::make(at, {0}, make_const(int32(), 0)),
         For::make(l, len, ForKind::kSerial,
                   IfThenElse::make(
                       X(l) > load(mx, {0}),
                       Seq::make({Store::make(mx, {0}, X(l)), Store::make(at, {0}, Expr(l))})))});
    Stmt write =
        For::make(l2, len, ForKind::kSerial,
                  Store::make(y, {o, l2, i},
                              select(eq(Expr(l2), load(at, {0})), fconst(t, 1.0), fconst(t, 0.0))));
    row = Allocate::make(mx, Allocate::make(at, Seq::make({find, write})));
  } else {
    Expr e = Call::make(CallOp::kExp, {load(x, {o, l2, i}) - load(mx, {0})});
    const bool log = node.op == graph::OpKind::kLogSoftmax;
    // LogSoftmax keeps y = x - max until the sum is known.
    Stmt exp_pass = Seq::make(
        {Store::make(sum, {0}, fconst(f64, 0)),
         For::make(
             l2, len, ForKind::kSerial,
             Seq::make({Store::make(y, {o, l2, i}, log ? load(x, {o, l2, i}) - load(mx, {0}) : e),
                        Store::make(sum, {0},
                                    load(sum, {0}) + cast(f64, log ? e : load(y, {o, l2, i})))}))});
    Expr yl = load(y, {o, l3, i});
    Stmt div_pass = For::make(
        l3, len, ForKind::kSerial,
        Store::make(y, {o, l3, i},
                    log ? cast(t, cast(f64, yl) - Call::make(CallOp::kLog, {load(sum, {0})}))
                        : cast(t, cast(f64, yl) / load(sum, {0}))));
    row = Allocate::make(mx, Allocate::make(sum, Seq::make({max_pass, exp_pass, div_pass})));
  }
  Stmt body = For::make(o, outer, outer > 1 ? ForKind::kParallel : ForKind::kSerial,
                        For::make(i, inner, ForKind::kSerial, row));
  CpuKernel k;
  k.func = Func{graph::op_name(node.op), {x, y}, body};
  return k;
}

void add_softmax_lowerings(std::vector<CpuLowering> &lowerings) {
  lowerings.push_back({graph::OpKind::kSoftmax, build_softmax});
  lowerings.push_back({graph::OpKind::kLogSoftmax, build_softmax});
  lowerings.push_back({graph::OpKind::kHardmax, build_softmax});
}

}  // namespace vacc::ops::cpu
