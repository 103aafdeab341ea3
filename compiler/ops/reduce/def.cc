// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, GlobalMaxPool (ReduceMax over the spatial axes),
// CumSum, and the index reductions ArgMax and ArgMin:
// reference kernels (accumulating in double, rounded to the element type), shape inference,
// import rules and OpDefs. vacc's form of a Reduce* node takes its axes as a constant input 1
// (ONNX's form since opset 18, ReduceSum's since 13): the importer turns the older opsets'
// `axes` attribute into that input.
#include <cmath>
#include <limits>
#include <type_traits>

#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::ops {

std::vector<bool> reduced_axes(const Node &node, const Shape &x) {
  const int rank = static_cast<int>(x.size());
  std::vector<bool> reduced(rank, false);
  if (node.op == OpKind::kGlobalMaxPool) {  // every spatial axis
    for (int d = 2; d < rank; ++d) reduced[d] = true;
    return reduced;
  }
  std::vector<int64_t> axes;
  if (const Value *a = node.input(1)) {
    if (!a->is_constant()) fail("the axes input '{}' must be a constant", a->name);
    axes = a->constant->to_int_vector();
  }
  if (axes.empty()) {
    // No axes: every axis, or none with noop_with_empty_axes.
    if (node.attrs.get_int("noop_with_empty_axes", 0) == 0) reduced.assign(rank, true);
    return reduced;
  }
  for (int64_t a : axes) {
    const int axis = normalize_axis(a, rank, "axis");
    if (reduced[axis]) fail("axis {} is reduced twice", axis);
    reduced[axis] = true;
  }
  return reduced;
}

namespace {

Shape reduced_shape(const Shape &x, const std::vector<bool> &reduced, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!reduced[d])
      out.push_back(x[d]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

bool keepdims(const Node &n) {
  return n.attrs.get_int("keepdims", 1) != 0;
}

void infer_reduce(Node &n) {
  Value &x = input_of(n, 0, "data");
  if (x.dtype == DType::kBool) fail("input '{}' is bool, expected a number", x.name);
  if (Value *axes = n.input(1)) {
    const_input(n, 1, "axes");
    if (axes->dtype != DType::kInt64) fail("axes '{}' must be int64", axes->name);
  }
  set_out(n, 0, x.dtype, reduced_shape(x.shape, reduced_axes(n, x.shape), keepdims(n)));
}

// Before opset 13 (ReduceSum) or 18 (the others) the axes are an attribute.
void import_reduce(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) {
  if (!attrs.has("axes")) return;
  std::vector<int64_t> axes = attrs.get_ints("axes");
  attrs.erase("axes");
  inputs.resize(1);
  inputs.push_back(ctx.constant(
      "axes", Tensor::from_vector<int64_t>({static_cast<int64_t>(axes.size())}, axes)));
}

// Per element and at the end: the accumulation of each reduction, in double.
struct Reduction {
  double init;
  double (*term)(double);
  double (*combine)(double, double);
  double (*finish)(double acc, double count);
};

Reduction reduction(OpKind op) {
  auto same = [](double v) { return v; };
  auto add = [](double a, double b) { return a + b; };
  auto keep = [](double a, double) { return a; };
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case OpKind::kReduceSum:
      return {0, same, add, keep};
    case OpKind::kReduceMean:
      return {0, same, add, [](double a, double n) { return a / n; }};
    case OpKind::kReduceMax:
    case OpKind::kGlobalMaxPool:
      return {-inf, same, [](double a, double b) { return std::max(a, b); }, keep};
    case OpKind::kReduceMin:
      return {inf, same, [](double a, double b) { return std::min(a, b); }, keep};
    case OpKind::kReduceProd:
      return {1, same, [](double a, double b) { return a * b; }, keep};
    case OpKind::kReduceL1:
      return {0, [](double v) { return std::abs(v); }, add, keep};
    case OpKind::kReduceL2:
      return {0, [](double v) { return v * v; }, add,
              [](double a, double) { return std::sqrt(a); }};
    case OpKind::kReduceSumSquare:
      return {0, [](double v) { return v * v; }, add, keep};
    case OpKind::kReduceLogSum:
      return {0, same, add, [](double a, double) { return std::log(a); }};
    case OpKind::kReduceLogSumExp:
      return {0, [](double v) { return std::exp(v); }, add,
              [](double a, double) { return std::log(a); }};
    default:
      VACC_CHECK(false) << "reduction of " << op_name(op);
      return {};
  }
}

// For each input element, the output element it reduces into.
std::vector<int64_t> reduce_targets(const Shape &x, const std::vector<bool> &reduced) {
  Shape kept = x;
  for (size_t d = 0; d < x.size(); ++d)
    if (reduced[d]) kept[d] = 1;
  return broadcast_offsets(kept, x);
}

Outputs reduce(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  const std::vector<bool> reduced = reduced_axes(node, x.shape());
  Tensor out(x.dtype(), node.outputs[0]->shape);
  const Reduction r = reduction(node.op);
  std::vector<double> acc(out.size(), r.init);
  const std::vector<int64_t> target = reduce_targets(x.shape(), reduced);
  for (int64_t i = 0; i < x.size(); ++i)
    acc[target[i]] = r.combine(acc[target[i]], r.term(x.as_double(i)));
  const double count = out.size() ? static_cast<double>(x.size()) / out.size() : 0;
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T *po = out.data<T>();
    for (int64_t i = 0; i < out.size(); ++i) {
      const double v = r.finish(acc[i], count);
      if constexpr (std::is_floating_point_v<T>) {
        po[i] = static_cast<T>(v);
      } else {
        po[i] = static_cast<T>(static_cast<int64_t>(v));
      }
    }
  });
  return single(std::move(out));
}

void infer_global_max_pool(Node &n) {
  Value &x = input_of(n, 0, "X");
  require_float(x, "X");
  if (x.rank() < 3) fail("input has rank {}, expected at least 3 (N, C, spatial...)", x.rank());
  set_out(n, 0, x.dtype, reduced_shape(x.shape, reduced_axes(n, x.shape), true));
}

// --- CumSum(x, axis): running sums along the axis (exclusive: without the element itself;
// reverse: from the end), accumulated in double.

int cumsum_axis(const Node &n, int rank) {
  const Value *a = n.input(1);
  if (!a || !a->is_constant() || a->constant->size() != 1)
    fail("the axis input must be a one-element constant");
  return normalize_axis(a->constant->as_int(0), rank, "axis");
}

void infer_cumsum(Node &n) {
  Value &x = input_of(n, 0, "x");
  if (x.dtype == DType::kBool) fail("input '{}' is bool, expected a number", x.name);
  const_input(n, 1, "axis");
  cumsum_axis(n, x.rank());
  set_out(n, 0, x.dtype, x.shape);
}

Outputs cumsum(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  const int axis = cumsum_axis(node, x.rank());
  const bool exclusive = node.attrs.get_int("exclusive", 0) != 0;
  const bool reverse = node.attrs.get_int("reverse", 0) != 0;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const int64_t len = x.dim(axis);
  Tensor out(x.dtype(), x.shape());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *px = x.data<T>();
    T *po = out.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double sum = 0;
        for (int64_t step = 0; step < len; ++step) {
          const int64_t l = reverse ? len - 1 - step : step;
          const int64_t at = (o * len + l) * inner + i;
          if (exclusive) po[at] = static_cast<T>(sum);
          sum += static_cast<double>(px[at]);
          if (!exclusive) po[at] = static_cast<T>(sum);
        }
      }
  });
  return single(std::move(out));
}

// --- ArgMax, ArgMin

void infer_arg_reduce(Node &n) {
  Value &x = input_of(n, 0, "data");
  if (x.dtype == DType::kBool) fail("input '{}' is bool, expected a number", x.name);
  const int axis = normalize_axis(n.attrs.get_int("axis", 0), x.rank(), "axis");
  std::vector<bool> reduced(x.rank(), false);
  reduced[axis] = true;
  set_out(n, 0, DType::kInt64, reduced_shape(x.shape, reduced, keepdims(n)));
}

Outputs arg_reduce(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  const int axis = normalize_axis(node.attrs.get_int("axis", 0), x.rank(), "axis");
  const bool last = node.attrs.get_int("select_last_index", 0) != 0;
  const bool is_max = node.op == OpKind::kArgMax;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const int64_t len = x.dim(axis);
  Tensor out(DType::kInt64, node.outputs[0]->shape);
  int64_t *po = out.data<int64_t>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      double best_v = len ? x.as_double(o * len * inner + i) : 0;
      for (int64_t l = 1; l < len; ++l) {
        const double v = x.as_double((o * len + l) * inner + i);
        const bool better =
            is_max ? (last ? v >= best_v : v > best_v) : (last ? v <= best_v : v < best_v);
        if (better) {
          best = l;
          best_v = v;
        }
      }
      po[o * inner + i] = best;
    }
  return single(std::move(out));
}

}  // namespace

void add_reduce_ops(std::vector<OpDef> &defs) {
  for (auto [op, name] :
       {std::pair{OpKind::kReduceSum, "ReduceSum"}, std::pair{OpKind::kReduceMean, "ReduceMean"},
        std::pair{OpKind::kReduceMax, "ReduceMax"}, std::pair{OpKind::kReduceMin, "ReduceMin"},
        std::pair{OpKind::kReduceProd, "ReduceProd"}, std::pair{OpKind::kReduceL1, "ReduceL1"},
        std::pair{OpKind::kReduceL2, "ReduceL2"}, std::pair{OpKind::kReduceLogSum, "ReduceLogSum"},
        std::pair{OpKind::kReduceLogSumExp, "ReduceLogSumExp"},
        std::pair{OpKind::kReduceSumSquare, "ReduceSumSquare"}}) {
    defs.push_back({.op = op,
                    .name = name,
                    .onnx = true,
                    .import = import_reduce,
                    .infer = infer_reduce,
                    .reference = reduce});
  }
  defs.push_back({.op = OpKind::kGlobalMaxPool,
                  .name = "GlobalMaxPool",
                  .onnx = true,
                  .infer = infer_global_max_pool,
                  .reference = reduce});
  defs.push_back({.op = OpKind::kCumSum,
                  .name = "CumSum",
                  .onnx = true,
                  .opset_min = 11,
                  .infer = infer_cumsum,
                  .reference = cumsum});
  for (auto [op, name] :
       {std::pair{OpKind::kArgMax, "ArgMax"}, std::pair{OpKind::kArgMin, "ArgMin"}}) {
    defs.push_back(
        {.op = op, .name = name, .onnx = true, .infer = infer_arg_reduce, .reference = arg_reduce});
  }
}

}  // namespace vacc::graph::ops
