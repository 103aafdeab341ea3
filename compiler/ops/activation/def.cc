// Activations and element tests: Elu, Selu, Celu, Softplus, Softsign, ThresholdedRelu, Shrink,
// Round (half to even), Sign, PRelu (slope broadcast), IsNaN and IsInf: reference kernels (in
// double, rounded to the element type), shape inference and OpDefs.
#include <cmath>
#include <type_traits>

#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::ops {
namespace {

void infer_activation(Node &n) {
  Value &x = input_of(n, 0, "X");
  if (n.op != OpKind::kSign) require_float(x, "X");
  if (x.dtype == DType::kBool) fail("input '{}' is bool, expected a number", x.name);
  set_out(n, 0, x.dtype, x.shape);
}

double activate(const Node &node, double x) {
  const auto attr = [&](const char *name, float fallback) {
    return static_cast<double>(node.attrs.get_float(name, fallback));
  };
  switch (node.op) {
    case OpKind::kElu:
      return x < 0 ? attr("alpha", 1.0f) * (std::exp(x) - 1) : x;
    case OpKind::kSelu:
      return attr("gamma", 1.05070102214813232421875f) *
             (x <= 0 ? attr("alpha", 1.67326319217681884765625f) * (std::exp(x) - 1) : x);
    case OpKind::kCelu: {
      const double alpha = attr("alpha", 1.0f);
      return std::max(0.0, x) + std::min(0.0, alpha * (std::exp(x / alpha) - 1));
    }
    case OpKind::kSoftplus:
      return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
    case OpKind::kSoftsign:
      return x / (1 + std::abs(x));
    case OpKind::kThresholdedRelu:
      return x > attr("alpha", 1.0f) ? x : 0;
    case OpKind::kShrink: {
      const double lambd = attr("lambd", 0.5f), bias = attr("bias", 0.0f);
      return x < -lambd ? x + bias : x > lambd ? x - bias : 0;
    }
    case OpKind::kRound:
      return std::nearbyint(x);  // the default rounding mode: half to even
    case OpKind::kSign:
      return x > 0 ? 1 : x < 0 ? -1 : 0;
    default:
      VACC_CHECK(false) << "activation: " << op_name(node.op);
      return 0;
  }
}

Outputs activation(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor out(x.dtype(), x.shape());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *px = x.data<T>();
    T *po = out.data<T>();
    for (int64_t i = 0; i < x.size(); ++i)
      po[i] = static_cast<T>(activate(node, static_cast<double>(px[i])));
  });
  return single(std::move(out));
}

// PRelu(X, slope): x where x >= 0, slope * x elsewhere, slope broadcast to X's shape.
void infer_prelu(Node &n) {
  Value &x = input_of(n, 0, "X"), &slope = input_of(n, 1, "slope");
  require_float(x, "X");
  require_dtype(slope, "slope", x.dtype);
  const Shape out = broadcast_shapes(x.shape, slope.shape);
  if (out != x.shape) {
    fail("slope '{}' {} does not broadcast to the input's shape {}", slope.name,
         shape_str(slope.shape), shape_str(x.shape));
  }
  set_out(n, 0, x.dtype, out);
}

Outputs prelu(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor out(x.dtype(), x.shape());
  const std::vector<int64_t> os = broadcast_offsets(in[1]->shape(), x.shape());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *px = x.data<T>(), *ps = in[1]->data<T>();
    T *po = out.data<T>();
    for (int64_t i = 0; i < x.size(); ++i) po[i] = px[i] < T(0) ? px[i] * ps[os[i]] : px[i];
  });
  return single(std::move(out));
}

// PRelu-6 broadcasts a one-dimensional slope of the input's channel count along axis 1 (legacy
// broadcasting); from opset 7, NumPy's rules. A constant slope is reshaped to [C, 1, ...].
void import_prelu(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) {
  if (ctx.opset >= 7 || inputs.size() < 2 || !inputs[0] || !inputs[1]) return;
  const Value &x = *inputs[0], &slope = *inputs[1];
  if (slope.rank() != 1 || x.rank() < 3 || slope.shape[0] != x.shape[1] || slope.shape[0] == 1)
    return;
  if (!slope.is_constant()) fail("PRelu-6's per-channel slope '{}' must be a constant", slope.name);
  Shape s(x.rank() - 1, 1);
  s[0] = slope.shape[0];
  inputs[1] = ctx.constant("slope", slope.constant->reshaped(s));
}

// IsNaN, IsInf (detect_positive, detect_negative): bool tensors.
void infer_is(Node &n) {
  Value &x = input_of(n, 0, "X");
  require_float(x, "X");
  set_out(n, 0, DType::kBool, x.shape);
}

Outputs is_special(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor out(DType::kBool, x.shape());
  const bool pos = node.attrs.get_int("detect_positive", 1) != 0;
  const bool neg = node.attrs.get_int("detect_negative", 1) != 0;
  uint8_t *po = out.data<uint8_t>();
  for (int64_t i = 0; i < x.size(); ++i) {
    const double v = x.as_double(i);
    po[i] = node.op == OpKind::kIsNaN ? std::isnan(v)
                                      : std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg));
  }
  return single(std::move(out));
}

}  // namespace

void add_activation_ops(std::vector<OpDef> &defs) {
  struct Activation {
    OpKind op;
    const char *name;
    int opset_min;
  };
  // Elu and Selu before opset 6 carry consumed_inputs, a legacy of in-place kernels.
  for (const Activation &a :
       {Activation{OpKind::kElu, "Elu", 6}, Activation{OpKind::kSelu, "Selu", 6},
        Activation{OpKind::kCelu, "Celu", 12}, Activation{OpKind::kSoftplus, "Softplus", 1},
        Activation{OpKind::kSoftsign, "Softsign", 1},
        Activation{OpKind::kThresholdedRelu, "ThresholdedRelu", 10},
        Activation{OpKind::kShrink, "Shrink", 9}, Activation{OpKind::kRound, "Round", 11},
        Activation{OpKind::kSign, "Sign", 9}}) {
    defs.push_back({.op = a.op,
                    .name = a.name,
                    .onnx = true,
                    .opset_min = a.opset_min,
                    .infer = infer_activation,
                    .reference = activation});
  }
  defs.push_back({.op = OpKind::kPRelu,
                  .name = "PRelu",
                  .onnx = true,
                  .opset_min = 6,
                  .import = import_prelu,
                  .infer = infer_prelu,
                  .reference = prelu});
  defs.push_back({.op = OpKind::kIsNaN,
                  .name = "IsNaN",
                  .onnx = true,
                  .opset_min = 9,
                  .infer = infer_is,
                  .reference = is_special});
  defs.push_back({.op = OpKind::kIsInf,
                  .name = "IsInf",
                  .onnx = true,
                  .opset_min = 10,
                  .infer = infer_is,
                  .reference = is_special});
}

}  // namespace vacc::graph::ops
