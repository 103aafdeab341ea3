// Element-wise math: Tanh, Exp, Log, Sqrt, Erf, Reciprocal, Floor, Ceil, Abs, Neg,
// HardSigmoid, HardSwish, vacc.Gelu (made by passes/recognize_gelu.h), Pow, Mod and the variadic
// broadcasting Sum, Mean, Max and Min: reference kernels (in double, rounded to the element
// type), shape inference and OpDefs.
#include <cmath>
#include <limits>
#include <type_traits>

#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::ops {
namespace {

bool float_only(OpKind op) {
  return op != OpKind::kAbs && op != OpKind::kNeg;
}

void infer_math(Node &n) {
  Value &x = input_of(n, 0, "X");
  if (float_only(n.op)) require_float(x, "X");
  if (x.dtype == DType::kBool) fail("input '{}' is bool, expected a number", x.name);
  set_out(n, 0, x.dtype, x.shape);
}

double apply_math(const Node &node, double v) {
  switch (node.op) {
    case OpKind::kTanh:
      return std::tanh(v);
    case OpKind::kExp:
      return std::exp(v);
    case OpKind::kLog:
      return std::log(v);
    case OpKind::kSqrt:
      return std::sqrt(v);
    case OpKind::kErf:
      return std::erf(v);
    case OpKind::kReciprocal:
      return 1.0 / v;
    case OpKind::kFloor:
      return std::floor(v);
    case OpKind::kCeil:
      return std::ceil(v);
    case OpKind::kHardSigmoid: {
      return hard_sigmoid(v, node.attrs.get_float("alpha", 0.2f),
                          node.attrs.get_float("beta", 0.5f));
    }
    case OpKind::kHardSwish:
      return v * std::max(0.0, std::min(1.0, v / 6.0 + 0.5));
    case OpKind::kGelu:
      return gelu(v, node.attrs.get_string("approximate", "none") == "tanh");
    default:
      VACC_CHECK(false) << "math: " << op_name(node.op);
      return 0;
  }
}

Outputs math(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor out(x.dtype(), x.shape());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *px = x.data<T>();
    T *po = out.data<T>();
    for (int64_t i = 0; i < x.size(); ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        if (node.op == OpKind::kAbs) {
          po[i] = std::abs(px[i]);
        } else if (node.op == OpKind::kNeg) {
          po[i] = -px[i];
        } else {
          po[i] = static_cast<T>(apply_math(node, static_cast<double>(px[i])));
        }
      } else {
        // Integers (Abs, Neg): two's complement wraps, as NumPy's.
        using U = std::make_unsigned_t<T>;
        const T v = px[i];
        const T neg = static_cast<T>(U(0) - static_cast<U>(v));
        po[i] = node.op == OpKind::kNeg || (std::is_signed_v<T> && v < 0) ? neg : v;
      }
    }
  });
  return single(std::move(out));
}

// Pow(X, Y): X's type; Y any number, broadcast.
void infer_pow(Node &n) {
  Value &x = input_of(n, 0, "X"), &y = input_of(n, 1, "Y");
  if (x.dtype == DType::kBool || y.dtype == DType::kBool) fail("Pow of booleans");
  set_out(n, 0, x.dtype, broadcast_shapes(x.shape, y.shape));
}

Outputs pow(const Node &node, const Inputs &in) {
  const Value *out_v = node.outputs[0];
  Tensor out(out_v->dtype, out_v->shape);
  const std::vector<int64_t> ox = broadcast_offsets(in[0]->shape(), out_v->shape);
  const std::vector<int64_t> oy = broadcast_offsets(in[1]->shape(), out_v->shape);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *px = in[0]->data<T>();
    T *po = out.data<T>();
    for (int64_t i = 0; i < out.size(); ++i) {
      const double r = std::pow(static_cast<double>(px[ox[i]]), in[1]->as_double(oy[i]));
      if constexpr (std::is_floating_point_v<T>) {
        po[i] = static_cast<T>(r);
      } else {
        po[i] = static_cast<T>(static_cast<int64_t>(r));
      }
    }
  });
  return single(std::move(out));
}

// Mod(A, B) of one type, broadcast: with fmod, the remainder of truncated division (C's fmod,
// the dividend's sign); without, of floored division (Python's %, the divisor's sign). A zero
// integer divisor gives 0.
void infer_mod(Node &n) {
  Value &a = input_of(n, 0, "A"), &b = input_of(n, 1, "B");
  require_dtype(b, "B", a.dtype);
  if (a.dtype == DType::kBool) fail("Mod of booleans");
  set_out(n, 0, a.dtype, broadcast_shapes(a.shape, b.shape));
}

template <typename T>
T mod_of(T a, T b, bool fmod) {
  if constexpr (std::is_floating_point_v<T>) {
    const T r = std::fmod(a, b);
    return fmod || r == 0 || (r < 0) == (b < 0) ? r : r + b;
  } else {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return 0;  // also where a / b overflows
    }
    const T r = static_cast<T>(a % b);
    return fmod || r == 0 || (r < 0) == (b < 0) ? r : static_cast<T>(r + b);
  }
}

Outputs mod(const Node &node, const Inputs &in) {
  const Value *out_v = node.outputs[0];
  Tensor out(out_v->dtype, out_v->shape);
  const bool fmod = node.attrs.get_int("fmod", 0) != 0;
  const std::vector<int64_t> oa = broadcast_offsets(in[0]->shape(), out_v->shape);
  const std::vector<int64_t> ob = broadcast_offsets(in[1]->shape(), out_v->shape);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *pa = in[0]->data<T>(), *pb = in[1]->data<T>();
    T *po = out.data<T>();
    for (int64_t i = 0; i < out.size(); ++i) po[i] = mod_of<T>(pa[oa[i]], pb[ob[i]], fmod);
  });
  return single(std::move(out));
}

// Sum, Mean, Max, Min of one or more inputs of one type, broadcast together.
void infer_variadic(Node &n) {
  if (n.inputs.empty()) fail("needs at least one input");
  Value &first = input_of(n, 0, "data_0");
  if (n.op == OpKind::kSum || n.op == OpKind::kMean) require_float(first, "data_0");
  if (first.dtype == DType::kBool) fail("input '{}' is bool, expected a number", first.name);
  Shape out = first.shape;
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    Value &v = input_of(n, i, "data");
    require_dtype(v, "data", first.dtype);
    out = broadcast_shapes(out, v.shape);
  }
  set_out(n, 0, first.dtype, out);
}

Outputs variadic(const Node &node, const Inputs &in) {
  const Value *out_v = node.outputs[0];
  Tensor out(out_v->dtype, out_v->shape);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T *po = out.data<T>();
    for (size_t k = 0; k < in.size(); ++k) {
      const std::vector<int64_t> off = broadcast_offsets(in[k]->shape(), out_v->shape);
      const T *p = in[k]->data<T>();
      for (int64_t i = 0; i < out.size(); ++i) {
        const T v = p[off[i]];
        if (k == 0) {
          po[i] = v;
        } else if (node.op == OpKind::kMax) {
          po[i] = std::max(po[i], v);
        } else if (node.op == OpKind::kMin) {
          po[i] = std::min(po[i], v);
        } else {
          po[i] = static_cast<T>(po[i] + v);
        }
      }
    }
    if (node.op == OpKind::kMean) {
      for (int64_t i = 0; i < out.size(); ++i) po[i] = static_cast<T>(po[i] / T(in.size()));
    }
  });
  return single(std::move(out));
}

}  // namespace

void add_math_ops(std::vector<OpDef> &defs) {
  struct Unary {
    OpKind op;
    const char *name;
    int opset_min;
    CpuBlocking cpu_blocking = CpuBlocking::kNone;
  };
  for (const Unary &u :
       {Unary{OpKind::kTanh, "Tanh", 1, CpuBlocking::kUnary}, Unary{OpKind::kExp, "Exp", 1},
        Unary{OpKind::kLog, "Log", 1}, Unary{OpKind::kSqrt, "Sqrt", 1},
        Unary{OpKind::kErf, "Erf", 9}, Unary{OpKind::kReciprocal, "Reciprocal", 1},
        Unary{OpKind::kFloor, "Floor", 1}, Unary{OpKind::kCeil, "Ceil", 1},
        Unary{OpKind::kAbs, "Abs", 1}, Unary{OpKind::kNeg, "Neg", 1},
        Unary{OpKind::kHardSigmoid, "HardSigmoid", 1, CpuBlocking::kUnary},
        Unary{OpKind::kHardSwish, "HardSwish", 14, CpuBlocking::kUnary}}) {
    defs.push_back({.op = u.op,
                    .name = u.name,
                    .onnx = true,
                    .opset_min = u.opset_min,
                    .infer = infer_math,
                    .reference = math,
                    .cpu_blocking = u.cpu_blocking});
  }
  defs.push_back(
      {.op = OpKind::kGelu, .name = "vacc.Gelu", .infer = infer_math, .reference = math});
  defs.push_back({.op = OpKind::kMod,
                  .name = "Mod",
                  .onnx = true,
                  .opset_min = 10,
                  .infer = infer_mod,
                  .reference = mod});
  defs.push_back(
      {.op = OpKind::kPow, .name = "Pow", .onnx = true, .infer = infer_pow, .reference = pow});
  for (auto [op, name] : {std::pair{OpKind::kSum, "Sum"}, std::pair{OpKind::kMean, "Mean"},
                          std::pair{OpKind::kMax, "Max"}, std::pair{OpKind::kMin, "Min"}}) {
    defs.push_back(
        {.op = op, .name = name, .onnx = true, .infer = infer_variadic, .reference = variadic});
  }
}

}  // namespace vacc::graph::ops
