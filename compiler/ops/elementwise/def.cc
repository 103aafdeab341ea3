// Element-wise operators: activations, Clip, Identity, Dropout (inference), Cast, the
// broadcasting arithmetic of Add, Sub, Mul and Div, Equal, Where, Expand and CastLike: reference
// kernels, shape inference, import rules and OpDefs. Integer arithmetic wraps (as NumPy's does),
// integer division truncates toward zero.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::ops {

namespace {

template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return static_cast<T>(a + b);
  }
}
template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return static_cast<T>(a - b);
  }
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return static_cast<T>(a * b);
  }
}
template <typename T>
T divide(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;  // undefined in ONNX; never a crash
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
    }
  }
  return static_cast<T>(a / b);
}

template <typename T, typename F>
void binary_loop(const Tensor &a, const Tensor &b, Tensor &out, F f) {
  const T *pa = a.data<T>();
  const T *pb = b.data<T>();
  T *po = out.data<T>();
  int64_t n = out.size();
  if (a.shape() == out.shape() && b.shape() == out.shape()) {
    for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
  } else if (a.shape() == out.shape() && b.size() == 1) {
    for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[0]);
  } else {
    std::vector<int64_t> oa = broadcast_offsets(a.shape(), out.shape());
    std::vector<int64_t> ob = broadcast_offsets(b.shape(), out.shape());
    for (int64_t i = 0; i < n; ++i) po[i] = f(pa[oa[i]], pb[ob[i]]);
  }
}

}  // namespace

Outputs binary(const Node &node, const Inputs &in) {
  const Value *out_v = node.outputs[0];
  Tensor out(out_v->dtype, out_v->shape);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    switch (node.op) {
      case OpKind::kAdd:
        binary_loop<T>(*in[0], *in[1], out, wrap_add<T>);
        break;
      case OpKind::kSub:
        binary_loop<T>(*in[0], *in[1], out, wrap_sub<T>);
        break;
      case OpKind::kMul:
        binary_loop<T>(*in[0], *in[1], out, wrap_mul<T>);
        break;
      case OpKind::kDiv:
        binary_loop<T>(*in[0], *in[1], out, divide<T>);
        break;
      default:
        VACC_CHECK(false) << "binary: " << op_name(node.op);
    }
  });
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

Outputs unary(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor out(x.dtype(), x.shape());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *px = x.data<T>();
    T *po = out.data<T>();
    int64_t n = x.size();
    switch (node.op) {
      case OpKind::kIdentity:
        std::copy(px, px + n, po);
        break;
      case OpKind::kRelu:
        for (int64_t i = 0; i < n; ++i) po[i] = px[i] > T(0) ? px[i] : T(0);
        break;
      case OpKind::kLeakyRelu: {
        T alpha = static_cast<T>(node.attrs.get_float("alpha", 0.01f));
        for (int64_t i = 0; i < n; ++i)
          po[i] = px[i] >= T(0) ? px[i] : static_cast<T>(px[i] * alpha);
        break;
      }
      case OpKind::kSigmoid:
        for (int64_t i = 0; i < n; ++i) {
          po[i] = static_cast<T>(sigmoid(static_cast<double>(px[i])));
        }
        break;
      case OpKind::kClip: {
        T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
        if (in.size() > 1 && in[1]) lo = in[1]->data<T>()[0];
        if (in.size() > 2 && in[2]) hi = in[2]->data<T>()[0];
        for (int64_t i = 0; i < n; ++i) po[i] = std::min(std::max(px[i], lo), hi);
        break;
      }
      default:
        VACC_CHECK(false) << "unary: " << op_name(node.op);
    }
  });
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

Outputs dropout(const Node &node, const Inputs &in) {
  bool training = in.size() > 2 && in[2] && in[2]->as_int(0) != 0;
  double ratio = in.size() > 1 && in[1] ? in[1]->as_double(0) : 0.5;
  if (training && ratio != 0.0) {
    fail("Dropout in training mode drops random elements; vacc runs inference only");
  }
  Outputs outs;
  outs.push_back(*in[0]);
  Tensor mask(DType::kBool, in[0]->shape());
  std::fill(mask.raw(), mask.raw() + mask.nbytes(), uint8_t{1});
  outs.push_back(std::move(mask));
  return outs;
}

}  // namespace vacc::graph::ops

namespace vacc::graph::ops {

// Equal: the broadcast comparison, a bool tensor.
Outputs equal(const Node &node, const Inputs &in) {
  const Value *out_v = node.outputs[0];
  Tensor out(DType::kBool, out_v->shape);
  std::vector<int64_t> oa = broadcast_offsets(in[0]->shape(), out_v->shape);
  std::vector<int64_t> ob = broadcast_offsets(in[1]->shape(), out_v->shape);
  uint8_t *po = out.data<uint8_t>();
  visit_dtype(in[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *pa = in[0]->data<T>(), *pb = in[1]->data<T>();
    for (int64_t i = 0; i < out.size(); ++i) po[i] = pa[oa[i]] == pb[ob[i]] ? 1 : 0;
  });
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

// Where(cond, x, y) and Expand(x, shape): element copies under broadcasting.
Outputs where(const Node &node, const Inputs &in) {
  const Value *out_v = node.outputs[0];
  Tensor out(out_v->dtype, out_v->shape);
  std::vector<int64_t> oc = broadcast_offsets(in[0]->shape(), out_v->shape);
  std::vector<int64_t> ox = broadcast_offsets(in[1]->shape(), out_v->shape);
  std::vector<int64_t> oy = broadcast_offsets(in[2]->shape(), out_v->shape);
  const uint8_t *pc = in[0]->data<uint8_t>();
  const int es = dtype_size(out.dtype());
  for (int64_t i = 0; i < out.size(); ++i) {
    const uint8_t *src = pc[oc[i]] ? in[1]->raw() + ox[i] * es : in[2]->raw() + oy[i] * es;
    std::memcpy(out.raw() + i * es, src, es);
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

Outputs expand(const Node &node, const Inputs &in) {
  const Value *out_v = node.outputs[0];
  Tensor out(out_v->dtype, out_v->shape);
  std::vector<int64_t> ox = broadcast_offsets(in[0]->shape(), out_v->shape);
  const int es = dtype_size(out.dtype());
  for (int64_t i = 0; i < out.size(); ++i)
    std::memcpy(out.raw() + i * es, in[0]->raw() + ox[i] * es, es);
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

// Cast: float to integer truncates toward zero (as NumPy's astype) and saturates.
Outputs cast(const Node &node, const Inputs &in) {
  const DType to = node.outputs[0]->dtype;
  const Tensor &x = *in[0];
  Outputs outs;
  if (dtype_is_float(x.dtype()) && !dtype_is_float(to) && to != DType::kBool) {
    Tensor t = x.cast(DType::kFloat64);
    double *p = t.data<double>();
    for (int64_t i = 0; i < t.size(); ++i) p[i] = std::isnan(p[i]) ? 0.0 : std::trunc(p[i]);
    outs.push_back(t.cast(to));
  } else {
    outs.push_back(x.cast(to));
  }
  return outs;
}

}  // namespace vacc::graph::ops

namespace vacc::graph::ops {
namespace {

void infer_unary(Node &n) {
  Value &x = input_of(n, 0, "X");
  if (n.op == OpKind::kSigmoid || n.op == OpKind::kLeakyRelu) require_float(x, "X");
  set_out(n, 0, x.dtype, x.shape);
}

void infer_binary(Node &n) {
  Value &a = input_of(n, 0, "A"), &b = input_of(n, 1, "B");
  require_dtype(b, "B", a.dtype);
  set_out(n, 0, a.dtype, broadcast_shapes(a.shape, b.shape));
}

void infer_dropout(Node &n) {
  Value &x = input_of(n, 0, "data");
  set_out(n, 0, x.dtype, x.shape);
  set_out(n, 1, DType::kBool, x.shape);
}

void infer_equal(Node &n) {
  Value &a = input_of(n, 0, "A"), &b = input_of(n, 1, "B");
  require_dtype(b, "B", a.dtype);
  set_out(n, 0, DType::kBool, broadcast_shapes(a.shape, b.shape));
}

void infer_where(Node &n) {
  Value &c = input_of(n, 0, "condition"), &x = input_of(n, 1, "X"), &y = input_of(n, 2, "Y");
  require_dtype(c, "condition", DType::kBool);
  require_dtype(y, "Y", x.dtype);
  set_out(n, 0, x.dtype, broadcast_shapes(c.shape, broadcast_shapes(x.shape, y.shape)));
}

void infer_expand(Node &n) {
  Value &x = input_of(n, 0, "input");
  std::vector<int64_t> shape = const_input(n, 1, "shape").to_int_vector();
  set_out(n, 0, x.dtype, broadcast_shapes(x.shape, shape));
}

// ONNX's TensorProto element types that vacc carries.
DType cast_target(int64_t to) {
  switch (to) {
    case 1:
      return DType::kFloat32;
    case 2:
      return DType::kUInt8;
    case 3:
      return DType::kInt8;
    case 5:
      return DType::kInt16;
    case 6:
      return DType::kInt32;
    case 7:
      return DType::kInt64;
    case 9:
      return DType::kBool;
    case 11:
      return DType::kFloat64;
    default:
      fail(
          "attribute 'to' is element type {}, which vacc does not carry (float, double, int8, "
          "uint8, int16, int32, int64, bool)",
          to);
  }
}

void infer_cast(Node &n) {
  Value &x = input_of(n, 0, "input");
  set_out(n, 0, cast_target(n.attrs.get_int("to")), x.shape);
}

// CastLike(input, target_type): Cast to target_type's element type.
void infer_cast_like(Node &n) {
  Value &x = input_of(n, 0, "input"), &like = input_of(n, 1, "target_type");
  set_out(n, 0, like.dtype, x.shape);
}

// Before opset 11 Clip's bounds are attributes.
void import_clip(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) {
  if (ctx.opset >= 11) return;
  inputs.resize(3, nullptr);
  if (attrs.has("min")) inputs[1] = ctx.constant("min", Tensor::scalar(attrs.get_float("min", 0)));
  if (attrs.has("max")) inputs[2] = ctx.constant("max", Tensor::scalar(attrs.get_float("max", 0)));
}

void import_dropout(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) {
  if (ctx.opset >= 12 && inputs.size() > 2 && inputs[2] && inputs[2]->is_constant() &&
      inputs[2]->constant->as_int(0) != 0) {
    float ratio = inputs.size() > 1 && inputs[1] && inputs[1]->is_constant()
                      ? static_cast<float>(inputs[1]->constant->as_double(0))
                      : 0.5f;
    if (ratio != 0.0f) {
      fail(
          "Dropout in training mode drops random elements; vacc runs inference only "
          "(export the model in eval mode)");
    }
  }
}

}  // namespace

void add_elementwise_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kRelu,
                  .name = "Relu",
                  .onnx = true,
                  .infer = infer_unary,
                  .reference = unary,
                  .quantize = QuantRule::kPassThrough,
                  .cpu_blocking = CpuBlocking::kUnary});
  defs.push_back({.op = OpKind::kClip,
                  .name = "Clip",
                  .onnx = true,
                  .import = import_clip,
                  .infer = infer_unary,
                  .reference = unary,
                  .cpu_blocking = CpuBlocking::kUnary});
  for (auto [op, name] :
       {std::pair{OpKind::kLeakyRelu, "LeakyRelu"}, std::pair{OpKind::kSigmoid, "Sigmoid"}}) {
    defs.push_back({.op = op,
                    .name = name,
                    .onnx = true,
                    .infer = infer_unary,
                    .reference = unary,
                    .cpu_blocking = CpuBlocking::kUnary});
  }
  defs.push_back({.op = OpKind::kIdentity,
                  .name = "Identity",
                  .onnx = true,
                  .infer = infer_unary,
                  .reference = unary,
                  .selects_elements = true});
  defs.push_back({.op = OpKind::kAdd,
                  .name = "Add",
                  .onnx = true,
                  .infer = infer_binary,
                  .reference = binary,
                  .quantize = QuantRule::kAdd,
                  .cpu_blocking = CpuBlocking::kBinary});
  for (auto [op, name] : {std::pair{OpKind::kSub, "Sub"}, std::pair{OpKind::kMul, "Mul"},
                          std::pair{OpKind::kDiv, "Div"}}) {
    defs.push_back({.op = op,
                    .name = name,
                    .onnx = true,
                    .infer = infer_binary,
                    .reference = binary,
                    .cpu_blocking = CpuBlocking::kBinary});
  }
  defs.push_back({.op = OpKind::kDropout,
                  .name = "Dropout",
                  .onnx = true,
                  .import = import_dropout,
                  .infer = infer_dropout,
                  .reference = dropout});
  defs.push_back({.op = OpKind::kEqual,
                  .name = "Equal",
                  .onnx = true,
                  .infer = infer_equal,
                  .reference = equal});
  defs.push_back({.op = OpKind::kWhere,
                  .name = "Where",
                  .onnx = true,
                  .opset_min = 9,
                  .infer = infer_where,
                  .reference = where});
  defs.push_back({.op = OpKind::kExpand,
                  .name = "Expand",
                  .onnx = true,
                  .opset_min = 8,
                  .infer = infer_expand,
                  .reference = expand});
  defs.push_back(
      {.op = OpKind::kCast, .name = "Cast", .onnx = true, .infer = infer_cast, .reference = cast});
  defs.push_back({.op = OpKind::kCastLike,
                  .name = "CastLike",
                  .onnx = true,
                  .opset_min = 15,
                  .infer = infer_cast_like,
                  .reference = cast});
}

}  // namespace vacc::graph::ops
