// Data movement: Flatten and Reshape (same bytes, new shape), Transpose, Concat and Pad
// (constant, reflect, edge; negative pads crop). All are dtype-agnostic byte copies.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::ops {

Outputs reshape_like(const Node &node, const Inputs &in) {
  Outputs outs;
  outs.push_back(in[0]->reshaped(node.outputs[0]->shape));
  return outs;
}

Outputs transpose(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  int rank = x.rank();
  std::vector<int64_t> perm = node.attrs.get_ints("perm");
  if (perm.empty()) {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  Tensor out(x.dtype(), node.outputs[0]->shape);
  std::vector<int64_t> in_stride(rank, 1);
  for (int i = rank - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * x.dim(i + 1);
  // Stride in the input of each output axis.
  std::vector<int64_t> stride(rank);
  for (int i = 0; i < rank; ++i) stride[i] = in_stride[perm[i]];
  int es = dtype_size(x.dtype());
  const uint8_t *src = x.raw();
  uint8_t *dst = out.raw();
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t n = 0; n < out.size(); ++n) {
    std::memcpy(dst + n * es, src + off * es, es);
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < out.dim(i)) {
        off += stride[i];
        break;
      }
      off -= stride[i] * (out.dim(i) - 1);
      idx[i] = 0;
    }
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

Outputs concat(const Node &node, const Inputs &in) {
  Tensor out(node.outputs[0]->dtype, node.outputs[0]->shape);
  int axis = normalize_axis(node.attrs.get_int("axis"), out.rank(), "axis");
  int64_t outer = 1;
  for (int i = 0; i < axis; ++i) outer *= out.dim(i);
  int es = dtype_size(out.dtype());
  int64_t out_row = out.size() / std::max<int64_t>(outer, 1) * es;
  int64_t offset = 0;
  for (const Tensor *t : in) {
    int64_t row = t->size() / std::max<int64_t>(outer, 1) * es;
    // An empty input has no buffer, and memcpy from null is undefined even for 0 bytes.
    for (int64_t o = 0; o < outer && row > 0; ++o)
      std::memcpy(out.raw() + o * out_row + offset, t->raw() + o * row, row);
    offset += row;
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

Outputs pad(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  std::vector<int64_t> pads = in[1]->to_int_vector();
  std::string mode = node.attrs.get_string("mode", "constant");
  Tensor out(x.dtype(), node.outputs[0]->shape);
  int rank = x.rank();
  int es = dtype_size(x.dtype());
  // The constant, as bytes of the element type.
  Tensor value(x.dtype(), {});
  if (in.size() > 2 && in[2] && in[2]->size() > 0) value = in[2]->reshaped({});
  std::vector<int64_t> in_stride(rank, 1);
  for (int i = rank - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * x.dim(i + 1);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t n = 0; n < out.size(); ++n) {
    int64_t off = 0;
    bool outside = false;
    for (int i = 0; i < rank; ++i) {
      int64_t s = idx[i] - pads[i], len = x.dim(i);
      if (s < 0 || s >= len) {
        if (mode == "edge") {
          s = s < 0 ? 0 : len - 1;
        } else if (mode == "reflect") {
          if (len == 1) {
            s = 0;
          } else {
            int64_t period = 2 * (len - 1);
            s = ((s % period) + period) % period;
            if (s >= len) s = period - s;
          }
        } else {
          outside = true;
          break;
        }
      }
      off += s * in_stride[i];
    }
    std::memcpy(out.raw() + n * es, outside ? value.raw() : x.raw() + off * es, es);
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < out.dim(i)) break;
      idx[i] = 0;
    }
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

}  // namespace vacc::graph::ops

namespace vacc::graph::ops {
namespace {

Outputs constant(const Node &node, const Inputs &in) {
  Outputs outs;
  outs.push_back(node.attrs.get_tensor("value"));
  return outs;
}

void infer_flatten(Node &n) {
  Value &x = input_of(n, 0, "input");
  int axis = normalize_axis(n.attrs.get_int("axis", 1), x.rank(), "axis", true);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < x.rank(); ++i) (i < axis ? outer : inner) *= x.shape[i];
  set_out(n, 0, x.dtype, {outer, inner});
}

void infer_reshape(Node &n) {
  Value &x = input_of(n, 0, "data");
  std::vector<int64_t> target = const_input(n, 1, "shape").to_int_vector();
  bool allowzero = n.attrs.get_int("allowzero", 0) != 0;
  Shape out(target.size());
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (infer >= 0) fail("shape has more than one -1");
      infer = static_cast<int>(i);
      continue;
    }
    if (target[i] == 0 && !allowzero) {
      if (i >= x.shape.size()) fail("shape copies dimension {} that the input lacks", i);
      out[i] = x.shape[i];
    } else if (target[i] < 0) {
      fail("shape has an invalid dimension {}", target[i]);
    } else {
      out[i] = target[i];
    }
    if (__builtin_mul_overflow(known, out[i], &known))
      fail("shape [{}] has more elements than 64 bits count", fmt::join(target, ","));
  }
  int64_t total = num_elements(x.shape);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      fail("cannot reshape {} into [{}]", shape_str(x.shape), fmt::join(target, ","));
    }
    out[infer] = total / known;
  }
  if (num_elements(out) != total) {
    fail("cannot reshape {} ({} elements) into {} ({} elements)", shape_str(x.shape), total,
         shape_str(out), num_elements(out));
  }
  set_out(n, 0, x.dtype, out);
}

// Before opset 5 the target shape is an attribute.
void import_reshape(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) {
  if (ctx.opset >= 5 || !attrs.has("shape")) return;
  std::vector<int64_t> shape = attrs.get_ints("shape");
  inputs.resize(1);
  inputs.push_back(ctx.constant(
      "shape", Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size())}, shape)));
}

void infer_transpose(Node &n) {
  Value &x = input_of(n, 0, "data");
  std::vector<int64_t> perm = n.attrs.get_ints("perm");
  if (perm.empty()) {
    for (int i = x.rank() - 1; i >= 0; --i) perm.push_back(i);
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(x.rank());
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota)
    fail("attribute 'perm' [{}] is not a permutation of the {} axes", fmt::join(perm, ","),
         x.rank());
  Shape out(x.rank());
  for (int i = 0; i < x.rank(); ++i) out[i] = x.shape[perm[i]];
  set_out(n, 0, x.dtype, out);
}

void infer_concat(Node &n) {
  if (n.inputs.empty()) fail("needs at least one input");
  Value &first = input_of(n, 0, "inputs");
  int axis = normalize_axis(n.attrs.get_int("axis"), first.rank(), "axis");
  Shape out = first.shape;
  out[axis] = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    Value &v = input_of(n, i, "inputs");
    require_dtype(v, "inputs", first.dtype);
    bool ok = v.rank() == first.rank();
    for (int d = 0; ok && d < v.rank(); ++d) ok = d == axis || v.shape[d] == first.shape[d];
    if (!ok) {
      fail("input {} '{}' has shape {}, incompatible with {} along axis {}", i, v.name,
           shape_str(v.shape), shape_str(first.shape), axis);
    }
    out[axis] += v.shape[axis];
  }
  set_out(n, 0, first.dtype, out);
}

void infer_pad(Node &n) {
  Value &x = input_of(n, 0, "data");
  std::vector<int64_t> pads = const_input(n, 1, "pads").to_int_vector();
  if (static_cast<int>(pads.size()) != 2 * x.rank()) {
    fail("pads has {} values, expected {} (begin and end per axis)", pads.size(), 2 * x.rank());
  }
  std::string mode = n.attrs.get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    fail("attribute 'mode' has unknown value '{}'", mode);
  }
  Shape out = x.shape;
  for (int i = 0; i < x.rank(); ++i) {
    out[i] += pads[i] + pads[i + x.rank()];
    if (out[i] < 0) fail("pads remove more than the whole of axis {}", i);
    if (mode == "reflect" && (pads[i] >= x.shape[i] || pads[i + x.rank()] >= x.shape[i])) {
      fail("reflect padding of axis {} must be smaller than its size {}", i, x.shape[i]);
    }
  }
  set_out(n, 0, x.dtype, out);
}

// Before opset 11 the pads and the constant value are attributes.
void import_pad(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) {
  if (ctx.opset >= 11) return;
  std::vector<int64_t> pads = attrs.get_ints("pads");
  inputs.resize(1);
  inputs.push_back(ctx.constant(
      "pads", Tensor::from_vector<int64_t>({static_cast<int64_t>(pads.size())}, pads)));
  float value = attrs.get_float("value", 0.0f);
  if (inputs[0] && inputs[0]->dtype == DType::kFloat32) {
    inputs.push_back(ctx.constant("value", Tensor::scalar(value)));
  }
}

// The importer turns Constant nodes into constant values; passes may still make them.
void infer_constant(Node &n) {
  const Tensor &t = n.attrs.get_tensor("value");
  set_out(n, 0, t.dtype(), t.shape());
}

}  // namespace

void add_shape_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kFlatten,
                  .name = "Flatten",
                  .onnx = true,
                  .infer = infer_flatten,
                  .reference = reshape_like,
                  .quantize = QuantRule::kPassThrough,
                  .selects_elements = true});
  defs.push_back({.op = OpKind::kReshape,
                  .name = "Reshape",
                  .onnx = true,
                  .import = import_reshape,
                  .infer = infer_reshape,
                  .reference = reshape_like,
                  .quantize = QuantRule::kPassThrough,
                  .selects_elements = true});
  defs.push_back({.op = OpKind::kTranspose,
                  .name = "Transpose",
                  .onnx = true,
                  .infer = infer_transpose,
                  .reference = transpose,
                  .quantize = QuantRule::kPassThrough,
                  .selects_elements = true});
  defs.push_back({.op = OpKind::kConcat,
                  .name = "Concat",
                  .onnx = true,
                  .infer = infer_concat,
                  .reference = concat,
                  .cpu_blocking = CpuBlocking::kConcat});
  defs.push_back({.op = OpKind::kPad,
                  .name = "Pad",
                  .onnx = true,
                  .import = import_pad,
                  .infer = infer_pad,
                  .reference = pad});
  defs.push_back({.op = OpKind::kConstant,
                  .name = "Constant",
                  .onnx = true,
                  .infer = infer_constant,
                  .reference = constant});
}

}  // namespace vacc::graph::ops
