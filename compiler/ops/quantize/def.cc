// Quantization operators: ONNX's QuantizeLinear / DequantizeLinear (per tensor or per axis)
// and vacc's integer requantization, whose semantics are exactly the accelerator ALU's:
// wrapping int32 adds, arithmetic shift right, min/max clipping (docs/quantization.md).
#include <cmath>
#include <limits>

#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::ops {

namespace {

// For per-axis parameters: the index into the parameter of element i.
struct AxisIndex {
  int64_t inner = 1, len = 1;
  bool per_axis = false;
  AxisIndex(const Tensor &x, const Tensor &param, int64_t axis_attr) {
    if (param.size() <= 1) return;
    per_axis = true;
    int axis = normalize_axis(axis_attr, x.rank(), "axis");
    len = x.dim(axis);
    if (param.size() != len) {
      fail("per-axis parameter has {} values for axis {} of size {}", param.size(), axis, len);
    }
    for (int i = axis + 1; i < x.rank(); ++i) inner *= x.dim(i);
  }
  int64_t operator()(int64_t i) const { return per_axis ? (i / inner) % len : 0; }
};

int32_t wrap32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}

int32_t shift_right(int32_t x, int64_t s) {
  // The ALU's SHR: a negative amount shifts left; amounts saturate at 31.
  if (s >= 0) return x >> std::min<int64_t>(s, 31);
  return wrap32(static_cast<int64_t>(static_cast<uint32_t>(x) << std::min<int64_t>(-s, 31)));
}

}  // namespace

Requant Requant::from(const Node &node) {
  Requant r;
  r.shifts = node.attrs.get_ints("shifts");
  if (r.shifts.empty()) r.shifts = {0};
  r.multipliers = node.attrs.get_ints("multipliers");
  r.pre_clip = static_cast<int32_t>(node.attrs.get_int("pre_clip", 0));
  r.post_shift = static_cast<int32_t>(node.attrs.get_int("post_shift", 0));
  r.zero_point = static_cast<int32_t>(node.attrs.get_int("zero_point", 0));
  r.clip_min = static_cast<int32_t>(node.attrs.get_int("clip_min", -128));
  r.clip_max = static_cast<int32_t>(node.attrs.get_int("clip_max", 127));
  return r;
}

int8_t Requant::apply(int32_t x, int64_t channel) const {
  int64_t s = shifts.size() == 1 ? shifts[0] : shifts[channel];
  int32_t v = shift_right(x, s);
  if (!multipliers.empty()) {
    // The ALU's max, min, mul (low 32 bits), shr, add: pre_clip keeps the product in range.
    const int64_t m = multipliers.size() == 1 ? multipliers[0] : multipliers[channel];
    v = std::min(std::max(v, -pre_clip), pre_clip);
    v = shift_right(wrap32(int64_t{v} * m), post_shift);
  }
  v = wrap32(int64_t{v} + zero_point);
  v = std::min(std::max(v, clip_min), clip_max);
  return static_cast<int8_t>(v);  // the truncating store keeps the low 8 bits
}

Outputs quantize_linear(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0], &scale = *in[1];
  const Tensor *zp = in.size() > 2 ? in[2] : nullptr;
  AxisIndex ax(x, scale, node.attrs.get_int("axis", 1));
  Tensor out(node.outputs[0]->dtype, x.shape());
  store_saturated(out, [&](int64_t i) {
    int64_t k = ax(i);
    double z = zp ? static_cast<double>(zp->as_int(zp->size() == 1 ? 0 : k)) : 0.0;
    // The quotient in x's type, as ONNX computes it (float32's rounding decides halves).
    double q = x.as_double(i) / scale.as_double(k);
    if (x.dtype() == DType::kFloat32) q = static_cast<float>(q);
    return std::nearbyint(q) + z;
  });
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

Outputs dequantize_linear(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0], &scale = *in[1];
  const Tensor *zp = in.size() > 2 ? in[2] : nullptr;
  AxisIndex ax(x, scale, node.attrs.get_int("axis", 1));
  Tensor out(DType::kFloat32, x.shape());
  float *po = out.data<float>();
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t k = ax(i);
    int64_t z = zp ? zp->as_int(zp->size() == 1 ? 0 : k) : 0;
    po[i] = static_cast<float>(static_cast<double>(x.as_int(i) - z) * scale.as_double(k));
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

Outputs requantize(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  Requant rq = Requant::from(node);
  int64_t C = x.rank() >= 2 ? x.dim(1) : 1;
  int64_t inner = x.rank() >= 2 ? x.size() / (x.dim(0) * C) : 1;
  Tensor out(DType::kInt8, x.shape());
  const int32_t *px = x.data<int32_t>();
  int8_t *po = out.data<int8_t>();
  for (int64_t i = 0; i < x.size(); ++i) po[i] = rq.apply(px[i], (i / inner) % C);
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

namespace {
// out = clip(((a << la) + (b << lb) + round) >> rs), where round is 2^(rs-1) when rs > 0: ALU
// shl (negative shr), add, add imm, shr, max, min.
Tensor add_int8(const Tensor &a, const Tensor &b, int64_t la, int64_t lb, int64_t rs, int32_t lo,
                int32_t hi) {
  int32_t round = rs > 0 ? (int32_t{1} << (rs - 1)) : 0;
  Tensor out(DType::kInt8, a.shape());
  const int8_t *pa = a.data<int8_t>(), *pb = b.data<int8_t>();
  int8_t *po = out.data<int8_t>();
  for (int64_t i = 0; i < a.size(); ++i) {
    int32_t va = shift_right(pa[i], -la), vb = shift_right(pb[i], -lb);
    int32_t v = wrap32(int64_t{va} + vb + round);
    v = std::min(std::max(shift_right(v, rs), lo), hi);
    po[i] = static_cast<int8_t>(v);
  }
  return out;
}
}  // namespace

Tensor residual_add(const Node &node, const Tensor &y, const Tensor &skip) {
  return add_int8(y, skip, node.attrs.get_int("residual_lshift", 0),
                  node.attrs.get_int("residual_lshift_skip", 0),
                  node.attrs.get_int("residual_rshift", 0),
                  static_cast<int32_t>(node.attrs.get_int("residual_clip_min", -128)),
                  static_cast<int32_t>(node.attrs.get_int("residual_clip_max", 127)));
}

Outputs qadd(const Node &node, const Inputs &in) {
  Outputs outs;
  outs.push_back(add_int8(*in[0], *in[1], node.attrs.get_int("lshift_a", 0),
                          node.attrs.get_int("lshift_b", 0), node.attrs.get_int("rshift", 0),
                          static_cast<int32_t>(node.attrs.get_int("clip_min", -128)),
                          static_cast<int32_t>(node.attrs.get_int("clip_max", 127))));
  return outs;
}

}  // namespace vacc::graph::ops

namespace vacc::graph::ops {
namespace {

void infer_quantize_linear(Node &n) {
  Value &x = input_of(n, 0, "x");
  require_float(x, "x");
  input_of(n, 1, "y_scale");
  set_out(n, 0, zero_point_dtype(n, 2, DType::kUInt8), x.shape);
}

void infer_dequantize_linear(Node &n) {
  Value &x = input_of(n, 0, "x");
  input_of(n, 1, "x_scale");
  set_out(n, 0, DType::kFloat32, x.shape);
}

void infer_requantize(Node &n) {
  Value &x = input_of(n, 0, "x");
  require_dtype(x, "x", DType::kInt32);
  check_requant_attrs(n, x.rank() >= 2 ? x.shape[1] : 1);
  set_out(n, 0, DType::kInt8, x.shape);
}

void infer_qadd(Node &n) {
  Value &a = input_of(n, 0, "a"), &b = input_of(n, 1, "b");
  require_dtype(a, "a", DType::kInt8);
  require_dtype(b, "b", DType::kInt8);
  if (a.shape != b.shape) {
    fail("inputs must have the same shape, got {} and {}", shape_str(a.shape), shape_str(b.shape));
  }
  if (a.layout != b.layout) fail("inputs have different layouts");
  set_out(n, 0, DType::kInt8, a.shape);
  if (n.outputs[0]) n.outputs[0]->layout = a.layout;
}

}  // namespace

void add_quantize_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kQuantizeLinear,
                  .name = "QuantizeLinear",
                  .onnx = true,
                  .opset_min = 10,
                  .infer = infer_quantize_linear,
                  .reference = quantize_linear});
  defs.push_back({.op = OpKind::kDequantizeLinear,
                  .name = "DequantizeLinear",
                  .onnx = true,
                  .opset_min = 10,
                  .infer = infer_dequantize_linear,
                  .reference = dequantize_linear});
  defs.push_back({.op = OpKind::kRequantize,
                  .name = "vacc.Requantize",
                  .infer = infer_requantize,
                  .reference = requantize});
  defs.push_back({.op = OpKind::kQAdd,
                  .name = "vacc.QAdd",
                  .infer = infer_qadd,
                  .reference = qadd,
                  .accel_operands = AccelOperands::kOutputBlocks});
}

}  // namespace vacc::graph::ops
