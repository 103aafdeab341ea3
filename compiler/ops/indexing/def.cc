// Shape queries and indexing: Shape, Size, Squeeze, Unsqueeze, Gather, Slice, ConstantOfShape and
// Range: reference kernels, shape inference, import rules and OpDefs. Inputs that decide a
// shape (axes, starts/ends, the shape of ConstantOfShape, Range's bounds) must be constants;
// the importer folds a node whose inputs are all constant, so shape subgraphs of static shapes
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) become constants at import.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/graph/slice.h"

namespace vacc::graph {

std::vector<SliceAxis> slice_axes(const Shape &x, const std::vector<int64_t> &starts,
                                  const std::vector<int64_t> &ends,
                                  const std::vector<int64_t> &axes_in,
                                  const std::vector<int64_t> &steps_in) {
  const int rank = static_cast<int>(x.size());
  if (starts.size() != ends.size()) {
    fail("starts has {} values and ends {}", starts.size(), ends.size());
  }
  std::vector<int64_t> axes = axes_in, steps = steps_in;
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    fail("starts, ends, axes and steps must have the same length");
  }
  std::vector<SliceAxis> out(rank);
  for (int d = 0; d < rank; ++d) out[d] = {0, 1, x[d]};
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int axis = normalize_axis(axes[i], rank, "axis");
    if (seen[axis]) fail("axis {} is sliced twice", axis);
    seen[axis] = true;
    const int64_t dim = x[axis], step = steps[i];
    if (step == 0) fail("step of axis {} is 0", axis);
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    const int64_t span = step > 0 ? end - start : start - end;
    const int64_t abs_step = step > 0 ? step : -step;
    out[axis] = {start, step, span <= 0 ? 0 : (span + abs_step - 1) / abs_step};
  }
  return out;
}

std::vector<SliceAxis> slice_axes(const Node &n) {
  auto ints = [&](size_t i) {
    const Value *v = n.input(i);
    if (!v) return std::vector<int64_t>{};
    if (!v->is_constant()) fail("input {} of Slice must be a constant", i);
    return v->constant->to_int_vector();
  };
  return slice_axes(n.inputs.at(0)->shape, ints(1), ints(2), ints(3), ints(4));
}

namespace ops {
namespace {

// --- Shape

// Shape(data)[start:end]: the data's static shape as int64 (the data itself is not read).
void shape_range(const Node &n, int rank, int64_t *start, int64_t *end) {
  auto clamp = [&](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank); };
  *start = clamp(n.attrs.get_int("start", 0));
  *end = clamp(n.attrs.get_int("end", rank));
}

void infer_shape(Node &n) {
  Value &x = input_of(n, 0, "data");
  int64_t start, end;
  shape_range(n, x.rank(), &start, &end);
  set_out(n, 0, DType::kInt64, {std::max<int64_t>(0, end - start)});
}

Outputs shape_of(const Node &node, const Inputs &in) {
  const Shape &x = node.inputs[0]->shape;
  int64_t start, end;
  shape_range(node, static_cast<int>(x.size()), &start, &end);
  std::vector<int64_t> dims(x.begin() + start, x.begin() + std::max(start, end));
  return single(Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims));
}

// Size(data): the data's static element count as an int64 scalar.
void infer_size(Node &n) {
  input_of(n, 0, "data");
  set_out(n, 0, DType::kInt64, {});
}

Outputs size_of(const Node &node, const Inputs &in) {
  return single(Tensor::scalar<int64_t>(num_elements(node.inputs[0]->shape)));
}

// --- Squeeze, Unsqueeze (same bytes, new shape)

// Before opset 13 the axes of Squeeze and Unsqueeze are an attribute.
void import_axes(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) {
  if (ctx.opset >= 13 || !attrs.has("axes")) return;
  std::vector<int64_t> axes = attrs.get_ints("axes");
  inputs.resize(1);
  inputs.push_back(ctx.constant(
      "axes", Tensor::from_vector<int64_t>({static_cast<int64_t>(axes.size())}, axes)));
}

std::vector<int64_t> axes_input(Node &n) {
  return n.input(1) ? const_input(n, 1, "axes").to_int_vector() : std::vector<int64_t>{};
}

void infer_squeeze(Node &n) {
  Value &x = input_of(n, 0, "data");
  std::vector<int64_t> axes = axes_input(n);
  std::vector<bool> drop(x.rank(), false);
  for (int64_t a : axes) {
    const int axis = normalize_axis(a, x.rank(), "axis");
    if (x.shape[axis] != 1) fail("axis {} has size {}, not 1", axis, x.shape[axis]);
    drop[axis] = true;
  }
  Shape out;
  for (int d = 0; d < x.rank(); ++d) {
    if (!(axes.empty() ? x.shape[d] == 1 : drop[d])) out.push_back(x.shape[d]);
  }
  set_out(n, 0, x.dtype, out);
}

void infer_unsqueeze(Node &n) {
  Value &x = input_of(n, 0, "data");
  std::vector<int64_t> axes = axes_input(n);
  if (axes.empty()) fail("needs the axes to insert");
  const int rank = x.rank() + static_cast<int>(axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    const int axis = normalize_axis(a, rank, "axis");
    if (inserted[axis]) fail("axis {} is given twice", axis);
    inserted[axis] = true;
  }
  Shape out;
  for (int d = 0, k = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : x.shape[k++]);
  set_out(n, 0, x.dtype, out);
}

Outputs relabel(const Node &node, const Inputs &in) {
  return single(in[0]->reshaped(node.outputs[0]->shape));
}

// --- Gather

void infer_gather(Node &n) {
  Value &x = input_of(n, 0, "data"), &idx = input_of(n, 1, "indices");
  if (idx.dtype != DType::kInt32 && idx.dtype != DType::kInt64) {
    fail("indices '{}' have type {}, expected i32 or i64", idx.name, dtype_name(idx.dtype));
  }
  if (x.rank() < 1) fail("data must have rank >= 1");
  const int axis = normalize_axis(n.attrs.get_int("axis", 0), x.rank(), "axis");
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  set_out(n, 0, x.dtype, out);
}

Outputs gather(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0], &idx = *in[1];
  const int axis = normalize_axis(node.attrs.get_int("axis", 0), x.rank(), "axis");
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const int64_t n = x.dim(axis), count = idx.size();
  const size_t row = static_cast<size_t>(inner) * dtype_size(x.dtype());
  Tensor out(x.dtype(), node.outputs[0]->shape);
  for (int64_t j = 0; j < count; ++j) {
    int64_t k = idx.as_int(j);
    if (k < -n || k >= n) fail("index {} is out of range for axis {} of size {}", k, axis, n);
    if (k < 0) k += n;
    for (int64_t o = 0; o < outer; ++o) {
      if (row) std::memcpy(out.raw() + (o * count + j) * row, x.raw() + (o * n + k) * row, row);
    }
  }
  return single(std::move(out));
}

// --- Slice

// Before opset 10 starts, ends and axes are attributes.
void import_slice(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) {
  if (ctx.opset >= 10) return;
  inputs.resize(1);
  for (const char *role : {"starts", "ends", "axes"}) {
    if (!attrs.has(role)) {
      inputs.push_back(nullptr);
      continue;
    }
    std::vector<int64_t> v = attrs.get_ints(role);
    inputs.push_back(
        ctx.constant(role, Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v)));
  }
}

void infer_slice(Node &n) {
  Value &x = input_of(n, 0, "data");
  for (size_t i = 1; i < n.inputs.size() && i <= 4; ++i) {
    static const char *roles[] = {"", "starts", "ends", "axes", "steps"};
    if (n.input(i)) const_input(n, i, roles[i]);
  }
  input_of(n, 1, "starts");
  input_of(n, 2, "ends");
  Shape out;
  for (const SliceAxis &a : slice_axes(n)) out.push_back(a.count);
  set_out(n, 0, x.dtype, out);
}

Outputs slice(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  const std::vector<SliceAxis> axes = slice_axes(node);
  Tensor out(x.dtype(), node.outputs[0]->shape);
  const int rank = x.rank(), es = dtype_size(x.dtype());
  std::vector<int64_t> stride(rank, 1), idx(rank, 0);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * x.dim(d + 1);
  for (int64_t i = 0; i < out.size(); ++i) {
    int64_t src = 0;
    for (int d = 0; d < rank; ++d) src += (axes[d].start + idx[d] * axes[d].step) * stride[d];
    std::memcpy(out.raw() + i * es, x.raw() + src * es, es);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < axes[d].count) break;
      idx[d] = 0;
    }
  }
  return single(std::move(out));
}

// --- ConstantOfShape, Range

void infer_constant_of_shape(Node &n) {
  std::vector<int64_t> shape = const_input(n, 0, "input").to_int_vector();
  for (int64_t d : shape)
    if (d < 0) fail("shape has a negative dimension {}", d);
  DType dtype = n.attrs.has("value") ? n.attrs.get_tensor("value").dtype() : DType::kFloat32;
  set_out(n, 0, dtype, shape);
}

Outputs constant_of_shape(const Node &node, const Inputs &in) {
  const Value *out_v = node.outputs[0];
  Tensor out(out_v->dtype, out_v->shape);
  if (node.attrs.has("value")) {
    const Tensor &v = node.attrs.get_tensor("value");
    if (v.size() != 1) fail("attribute 'value' must hold one element, holds {}", v.size());
    const int es = dtype_size(v.dtype());
    for (int64_t i = 0; i < out.size(); ++i) std::memcpy(out.raw() + i * es, v.raw(), es);
  }
  return single(std::move(out));
}

void infer_range(Node &n) {
  const Tensor &start = const_input(n, 0, "start"), &limit = const_input(n, 1, "limit");
  const Tensor &delta = const_input(n, 2, "delta");
  if (start.dtype() != limit.dtype() || start.dtype() != delta.dtype()) {
    fail("start, limit and delta must have one type");
  }
  const double d = delta.as_double(0);
  if (d == 0) fail("delta is 0");
  const double count = std::ceil((limit.as_double(0) - start.as_double(0)) / d);
  set_out(n, 0, start.dtype(), {std::max<int64_t>(0, static_cast<int64_t>(count))});
}

Outputs range(const Node &node, const Inputs &in) {
  Tensor out(node.outputs[0]->dtype, node.outputs[0]->shape);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T start = in[0]->data<T>()[0], delta = in[2]->data<T>()[0];
    T *p = out.data<T>();
    for (int64_t i = 0; i < out.size(); ++i) p[i] = static_cast<T>(start + T(i) * delta);
  });
  return single(std::move(out));
}

}  // namespace

void add_indexing_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kShape,
                  .name = "Shape",
                  .onnx = true,
                  .infer = infer_shape,
                  .reference = shape_of,
                  .reads_shapes_only = true});
  defs.push_back({.op = OpKind::kSize,
                  .name = "Size",
                  .onnx = true,
                  .infer = infer_size,
                  .reference = size_of,
                  .reads_shapes_only = true});
  defs.push_back({.op = OpKind::kSqueeze,
                  .name = "Squeeze",
                  .onnx = true,
                  .import = import_axes,
                  .infer = infer_squeeze,
                  .reference = relabel,
                  .selects_elements = true});
  defs.push_back({.op = OpKind::kUnsqueeze,
                  .name = "Unsqueeze",
                  .onnx = true,
                  .import = import_axes,
                  .infer = infer_unsqueeze,
                  .reference = relabel,
                  .selects_elements = true});
  defs.push_back({.op = OpKind::kGather,
                  .name = "Gather",
                  .onnx = true,
                  .infer = infer_gather,
                  .reference = gather});
  defs.push_back({.op = OpKind::kSlice,
                  .name = "Slice",
                  .onnx = true,
                  .import = import_slice,
                  .infer = infer_slice,
                  .reference = slice});
  defs.push_back({.op = OpKind::kConstantOfShape,
                  .name = "ConstantOfShape",
                  .onnx = true,
                  .opset_min = 9,
                  .infer = infer_constant_of_shape,
                  .reference = constant_of_shape});
  defs.push_back({.op = OpKind::kRange,
                  .name = "Range",
                  .onnx = true,
                  .opset_min = 11,
                  .infer = infer_range,
                  .reference = range});
}

}  // namespace ops
}  // namespace vacc::graph
