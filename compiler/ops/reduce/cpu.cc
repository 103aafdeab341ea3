// Reductions on the CPU: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare over any set of axes, GlobalMaxPool
// (ReduceMax over the spatial axes), CumSum, ArgMax and ArgMin along one axis. Their
// accumulations (max, arg-max, sums) have no compute form in te, so the loops are written directly
// in loop IR: the kept axes outside (the outermost parallel on large tensors), the reduced axes
// inside with a local accumulator. Sums accumulate in float64 as the graph reference does; max and
// min in the element type.
#include "graph/registry/families.h"
#include "ops/cpu/common.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::ops::cpu {
namespace {

using graph::OpKind;
using namespace tir;

CpuKernel build_reduce(const Node &node) {
  KernelBuilder kb(node);
  const Shape xs = kb.in_value(0).shape;
  const std::vector<bool> reduced = graph::ops::reduced_axes(node, xs);
  const DataType t = kb.in_type(0), f64 = DataType::float_(64);
  const bool extremum = node.op == OpKind::kReduceMax || node.op == OpKind::kReduceMin ||
                        node.op == OpKind::kGlobalMaxPool;
  const DataType at = extremum ? t : f64;
  Shape kept_shape, kept, red;
  for (size_t d = 0; d < xs.size(); ++d) {
    kept_shape.push_back(reduced[d] ? 1 : xs[d]);
    (reduced[d] ? red : kept).push_back(xs[d]);
  }
  Buffer x = make_buffer("x", t, at_least_1d(xs));
  Buffer y = make_buffer("y", t, at_least_1d(kept_shape));
  Buffer acc = make_buffer("acc", at, {1}, Scope::kLocal);
  int64_t count = 1;
  for (int64_t e : red) count *= e;
  Expr init;
  switch (node.op) {
    case OpKind::kReduceMax:
    case OpKind::kGlobalMaxPool:
      init = lowest(t);
      break;
    case OpKind::kReduceMin:
      init = highest(t);
      break;
    case OpKind::kReduceProd:
      init = fconst(f64, 1.0);
      break;
    default:
      init = fconst(f64, 0.0);
  }
  auto term = [&](Expr v) -> Expr {
    if (extremum) return v;
    v = cast(f64, v);
    switch (node.op) {
      case OpKind::kReduceL1:
        return call(CallOp::kAbs, v);
      case OpKind::kReduceL2:
      case OpKind::kReduceSumSquare:
        return v * v;
      case OpKind::kReduceLogSumExp:
        return call(CallOp::kExp, v);
      default:
        return v;
    }
  };
  auto combine = [&](Expr a, Expr b) -> Expr {
    switch (node.op) {
      case OpKind::kReduceMax:
      case OpKind::kGlobalMaxPool:
        return max(a, b);
      case OpKind::kReduceMin:
        return min(a, b);
      case OpKind::kReduceProd:
        return a * b;
      default:
        return a + b;
    }
  };
  auto finish = [&](Expr a) -> Expr {
    switch (node.op) {
      case OpKind::kReduceMean:
        a = a / fconst(f64, static_cast<double>(count));
        break;
      case OpKind::kReduceL2:
        a = call(CallOp::kSqrt, a);
        break;
      case OpKind::kReduceLogSum:
      case OpKind::kReduceLogSumExp:
        a = call(CallOp::kLog, a);
        break;
      default:
        break;
    }
    return at == t ? a : cast(t, a);
  };
  // Input and output indices from the kept and reduced loop variables.
  auto indices = [&](const std::vector<Expr> &k, const std::vector<Expr> &r, bool output) {
    std::vector<Expr> idx;
    size_t ki = 0, ri = 0;
    for (size_t d = 0; d < xs.size(); ++d) {
      if (!reduced[d])
        idx.push_back(k[ki++]);
      else
        idx.push_back(output ? Expr(0) : r[ri++]);
    }
    if (idx.empty()) idx.push_back(0);
    return idx;
  };
  const bool parallel = graph::num_elements(xs) >= kParallelElements;
  Stmt body = loop_nest(kept, "i", parallel, [&](const std::vector<Expr> &k) {
    Stmt update = loop_nest(red, "r", false, [&](const std::vector<Expr> &r) {
      return Store::make(acc, {0}, combine(load(acc, {0}), term(load(x, indices(k, r, false)))));
    });
    return Allocate::make(
        acc, Seq::make({Store::make(acc, {0}, init), update,
                        Store::make(y, indices(k, {}, true), finish(load(acc, {0})))}));
  });
  CpuKernel kernel;
  kernel.func = direct_func(node, {{0, x}}, {y}, body);
  return kernel;
}

// CumSum: per row along the axis (reversed with `reverse`), a float64 running sum stored before
// (exclusive) or after adding each element.
CpuKernel build_cumsum(const Node &node) {
  KernelBuilder kb(node);
  const Shape xs = kb.in_value(0).shape;
  const int rank = static_cast<int>(xs.size());
  const int axis = graph::normalize_axis(kb.constant(1, "axis").as_int(0), rank, "axis");
  const bool exclusive = node.attrs.get_int("exclusive", 0) != 0;
  const bool reverse = node.attrs.get_int("reverse", 0) != 0;
  const DataType t = kb.in_type(0), f64 = DataType::float_(64);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= xs[d];
  for (int d = axis + 1; d < rank; ++d) inner *= xs[d];
  const int64_t len = xs[axis];
  Buffer x = make_buffer("x", t, {outer, len, inner});
  Buffer y = make_buffer("y", t, {outer, len, inner});
  Buffer sum = make_buffer("sum", f64, {1}, Scope::kLocal);
  const bool parallel = graph::num_elements(xs) >= kParallelElements;
  Stmt body = loop_nest({outer, inner}, "i", parallel, [&](const std::vector<Expr> &i) {
    Var step = make_var("step");
    Expr l = reverse ? Expr(static_cast<int>(len - 1)) - Expr(step) : Expr(step);
    Stmt add = Store::make(sum, {0}, load(sum, {0}) + cast(f64, load(x, {i[0], l, i[1]})));
    Stmt store = Store::make(y, {i[0], l, i[1]}, cast(t, load(sum, {0})));
    Stmt scan = For::make(step, len, ForKind::kSerial,
                          exclusive ? Seq::make({store, add}) : Seq::make({add, store}));
    return Allocate::make(sum, Seq::make({Store::make(sum, {0}, fconst(f64, 0.0)), scan}));
  });
  CpuKernel kernel;
  kernel.func = direct_func(node, {{0, x}}, {y}, body);
  return kernel;
}

CpuKernel build_arg_reduce(const Node &node) {
  KernelBuilder kb(node);
  const Shape xs = kb.in_value(0).shape;
  const int axis =
      graph::normalize_axis(node.attrs.get_int("axis", 0), static_cast<int>(xs.size()), "axis");
  const bool last = node.attrs.get_int("select_last_index", 0) != 0;
  const bool is_max = node.op == OpKind::kArgMax;
  const DataType t = kb.in_type(0);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= xs[d];
  for (size_t d = axis + 1; d < xs.size(); ++d) inner *= xs[d];
  const int64_t len = xs[axis];
  if (len == 0) kb.unsupported("an empty axis");
  Buffer x = make_buffer("x", t, {outer, len, inner});
  Buffer y = make_buffer("y", int64(), {outer, inner});
  Buffer best = make_buffer("best", t, {1}, Scope::kLocal);
  Buffer at = make_buffer("at", int64(), {1}, Scope::kLocal);
  const bool parallel = graph::num_elements(xs) >= kParallelElements;
  Stmt body = loop_nest({outer, inner}, "i", parallel, [&](const std::vector<Expr> &i) {
    Var l = make_var("l");
    Expr v = load(x, {i[0], Expr(l), i[1]}), b = load(best, {0});
    Expr better = is_max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
    Stmt scan = For::make(
        l, len, ForKind::kSerial,
        IfThenElse::make(better, Seq::make({Store::make(best, {0}, v),
                                            Store::make(at, {0}, cast(int64(), Expr(l)))})));
    return Allocate::make(
        best, Allocate::make(at, Seq::make({Store::make(best, {0}, load(x, {i[0], 0, i[1]})),
                                            Store::make(at, {0}, iconst(int64(), 0)), scan,
                                            Store::make(y, {i[0], i[1]}, load(at, {0}))})));
  });
  CpuKernel kernel;
  kernel.func = direct_func(node, {{0, x}}, {y}, body);
  return kernel;
}

}  // namespace

void add_reduce_lowerings(std::vector<CpuLowering> &lowerings) {
  for (OpKind op : {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax, OpKind::kReduceMin,
                    OpKind::kReduceProd, OpKind::kReduceL1, OpKind::kReduceL2,
                    OpKind::kReduceLogSum, OpKind::kReduceLogSumExp, OpKind::kReduceSumSquare}) {
    lowerings.push_back({op, build_reduce});
  }
  lowerings.push_back({OpKind::kGlobalMaxPool, build_reduce});
  lowerings.push_back({OpKind::kCumSum, build_cumsum});
  lowerings.push_back({OpKind::kArgMax, build_arg_reduce});
  lowerings.push_back({OpKind::kArgMin, build_arg_reduce});
}

}  // namespace vacc::ops::cpu
