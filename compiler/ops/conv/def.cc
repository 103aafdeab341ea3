// Convolutions: Conv (float), ConvInteger, QLinearConv, vacc.QConv and ConvTranspose.
// Every convolution is im2col followed by one Eigen matrix product per image and group, on
// 1-, 2- and 3-D spatial shapes (lower ranks are treated as 3-D with unit extents). Integer
// convolutions subtract zero points first and accumulate in int32.
#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "graph/registry/families.h"
#include "graph/window.h"

namespace vacc::graph::ops {

namespace {

// A window padded to three spatial dimensions.
struct Win3 {
  int64_t in[3], k[3], s[3], d[3], pb[3], out[3];
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
};

Win3 to_win3(const Window &w) {
  Win3 r;
  int lead = 3 - w.rank;
  for (int i = 0; i < 3; ++i) {
    bool real = i >= lead;
    int j = i - lead;
    r.in[i] = real ? w.in[j] : 1;
    r.k[i] = real ? w.kernel[j] : 1;
    r.s[i] = real ? w.stride[j] : 1;
    r.d[i] = real ? w.dilation[j] : 1;
    r.pb[i] = real ? w.pad_begin[j] : 0;
    r.out[i] = real ? w.out[j] : 1;
  }
  return r;
}

Window conv_window(const Node &node, const Shape &x, const Shape &w) {
  std::vector<int64_t> spatial(x.begin() + 2, x.end());
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  return make_window(node.attrs, spatial, kernel, false);
}

// cols[c*K + k][p] = x[c][window position p shifted by kernel offset k], zero outside.
template <typename T>
void im2col(const T *x, int64_t channels, const Win3 &w, T *cols) {
  int64_t P = w.out_size();
  for (int64_t c = 0; c < channels; ++c) {
    const T *xc = x + c * w.in_size();
    for (int64_t kd = 0; kd < w.k[0]; ++kd)
      for (int64_t kh = 0; kh < w.k[1]; ++kh)
        for (int64_t kw = 0; kw < w.k[2]; ++kw) {
          int64_t row = (c * w.k[0] + kd) * w.k[1] * w.k[2] + kh * w.k[2] + kw;
          T *dst = cols + row * P;
          for (int64_t od = 0; od < w.out[0]; ++od) {
            int64_t id = od * w.s[0] + kd * w.d[0] - w.pb[0];
            for (int64_t oh = 0; oh < w.out[1]; ++oh) {
              int64_t ih = oh * w.s[1] + kh * w.d[1] - w.pb[1];
              T *drow = dst + (od * w.out[1] + oh) * w.out[2];
              if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
                std::fill(drow, drow + w.out[2], T(0));
                continue;
              }
              const T *srow = xc + (id * w.in[1] + ih) * w.in[2];
              for (int64_t ow = 0; ow < w.out[2]; ++ow) {
                int64_t iw = ow * w.s[2] + kw * w.d[2] - w.pb[2];
                drow[ow] = iw >= 0 && iw < w.in[2] ? srow[iw] : T(0);
              }
            }
          }
        }
  }
}

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// out[n][m][p] = sum_{c,k} w[m][c][k] * cols(x[n])[c*K+k][p] (+ bias[m]), per group.
template <typename T>
void conv_core(const T *x, const Shape &xs, const T *w, const Shape &ws, const T *bias,
               int64_t group, const Window &window, T *out) {
  Win3 w3 = to_win3(window);
  int64_t N = xs[0], C = xs[1], M = ws[0];
  int64_t Cg = C / group, Mg = M / group, K = w3.k_size(), P = w3.out_size();
  std::vector<T> cols(static_cast<size_t>(Cg * K * P));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t g = 0; g < group; ++g) {
      im2col(x + (n * C + g * Cg) * w3.in_size(), Cg, w3, cols.data());
      Eigen::Map<const RowMatrix<T>> wm(w + g * Mg * Cg * K, Mg, Cg * K);
      Eigen::Map<const RowMatrix<T>> cm(cols.data(), Cg * K, P);
      Eigen::Map<RowMatrix<T>> om(out + (n * M + g * Mg) * P, Mg, P);
      om.noalias() = wm * cm;
      if (bias) {
        for (int64_t m = 0; m < Mg; ++m) om.row(m).array() += bias[g * Mg + m];
      }
    }
  }
}

// An integer tensor minus its zero point (scalar, or per output channel for weights), as
// values of the accumulation type A.
template <typename A>
std::vector<A> centered(const Tensor &t, const Tensor *zp, int64_t per_channel_dim0) {
  std::vector<A> out(t.size());
  int64_t inner = per_channel_dim0 > 0 ? t.size() / per_channel_dim0 : t.size();
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *p = t.data<T>();
    for (int64_t i = 0; i < t.size(); ++i) {
      int64_t z = 0;
      if (zp && zp->size() > 0) z = zp->size() == 1 ? zp->as_int(0) : zp->as_int(i / inner);
      out[i] = static_cast<A>(static_cast<int64_t>(p[i]) - z);
    }
  });
  return out;
}

template <typename A>
void integer_conv_as(const Node &node, const Tensor &x, const Tensor *xzp, const Tensor &w,
                     const Tensor *wzp, const Window &window, Tensor &acc) {
  std::vector<A> xc = centered<A>(x, xzp, 0);
  std::vector<A> wc = centered<A>(w, wzp, wzp && wzp->size() > 1 ? w.dim(0) : 0);
  std::vector<A> out(acc.size());
  conv_core<A>(xc.data(), x.shape(), wc.data(), w.shape(), nullptr, node.attrs.get_int("group", 1),
               window, out.data());
  int32_t *pa = acc.data<int32_t>();
  for (int64_t i = 0; i < acc.size(); ++i) {
    pa[i] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(out[i])));
  }
}

int64_t max_abs_centered(const Tensor &t, const Tensor *zp) {
  int64_t lo = 0, hi = 0;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    lo = static_cast<int64_t>(std::numeric_limits<T>::lowest());
    hi = static_cast<int64_t>(std::numeric_limits<T>::max());
  });
  int64_t z = 0;
  if (zp) {
    for (int64_t i = 0; i < zp->size(); ++i) z = std::max(z, std::abs(zp->as_int(i)));
  }
  return std::max(std::abs(lo), std::abs(hi)) + z;
}

// int32 accumulators of an integer convolution with zero points subtracted. The products
// are summed in float or double when every partial sum is an integer the type represents
// exactly (|sum| < 2^24 or 2^53), which is bit-identical to int32 accumulation and lets
// Eigen vectorize; otherwise in int64.
Tensor integer_conv(const Node &node, const Tensor &x, const Tensor *xzp, const Tensor &w,
                    const Tensor *wzp) {
  Window window = conv_window(node, x.shape(), w.shape());
  Shape out_shape = {x.dim(0), w.dim(0)};
  out_shape.insert(out_shape.end(), window.out.begin(), window.out.end());
  Tensor acc(DType::kInt32, out_shape);
  double bound = static_cast<double>(max_abs_centered(x, xzp)) * max_abs_centered(w, wzp) *
                 static_cast<double>(w.size() / std::max<int64_t>(w.dim(0), 1));
  if (bound < 16777216.0) {
    integer_conv_as<float>(node, x, xzp, w, wzp, window, acc);
  } else if (bound < 9007199254740992.0) {
    integer_conv_as<double>(node, x, xzp, w, wzp, window, acc);
  } else {
    integer_conv_as<int64_t>(node, x, xzp, w, wzp, window, acc);
  }
  return acc;
}

// Adds an int32 bias per channel (dimension 1) with wrap-around, as the accelerator does.
void add_bias(Tensor &acc, const Tensor &bias) {
  int64_t M = acc.dim(1), P = acc.size() / (acc.dim(0) * M);
  int32_t *pa = acc.data<int32_t>();
  for (int64_t i = 0; i < acc.size(); ++i) {
    int64_t b = bias.as_int((i / P) % M);
    pa[i] = static_cast<int32_t>(static_cast<uint32_t>(pa[i]) + static_cast<uint32_t>(b));
  }
}

}  // namespace

Tensor float_conv(const Node &node, const Tensor &x, const Tensor &w, const Tensor *b,
                  const Tensor *sum) {
  Window window = conv_window(node, x.shape(), w.shape());
  Shape shape = {x.dim(0), w.dim(0)};
  shape.insert(shape.end(), window.out.begin(), window.out.end());
  Tensor out(x.dtype(), shape);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      conv_core<T>(x.data<T>(), x.shape(), w.data<T>(), w.shape(), b ? b->data<T>() : nullptr,
                   node.attrs.get_int("group", 1), window, out.data<T>());
      T *o = out.data<T>();
      if (sum) {  // a fused residual add (vacc.ConvNCHWc's Sum), before the activation
        VACC_CHECK(sum->shape() == out.shape()) << "float_conv: the sum's shape";
        for (int64_t i = 0; i < out.size(); ++i) o[i] += sum->data<T>()[i];
      }
      // A fused activation (passes/fuse_activations.h): the output clamped.
      if (node.attrs.has("activation_min") || node.attrs.has("activation_max")) {
        const T lo = node.attrs.has("activation_min")
                         ? static_cast<T>(node.attrs.get_float("activation_min", 0))
                         : std::numeric_limits<T>::lowest();
        const T hi = node.attrs.has("activation_max")
                         ? static_cast<T>(node.attrs.get_float("activation_max", 0))
                         : std::numeric_limits<T>::max();
        for (int64_t i = 0; i < out.size(); ++i) o[i] = std::min(std::max(o[i], lo), hi);
      }
      // A fused gate, y * gate(y) (vacc.ConvNCHWc only), with Sigmoid's and HardSigmoid's own
      // references.
      const std::string gate = node.attrs.get_string("activation", "");
      if (gate == "hardswish") {
        const double alpha = node.attrs.get_float("activation_alpha", 0.2f);
        const double beta = node.attrs.get_float("activation_beta", 0.5f);
        for (int64_t i = 0; i < out.size(); ++i) {
          const double v = static_cast<double>(o[i]);
          const T hs = static_cast<T>(hard_sigmoid(v, alpha, beta));
          o[i] = static_cast<T>(v * static_cast<double>(hs));
        }
      }
      if (gate == "silu") {
        for (int64_t i = 0; i < out.size(); ++i) {
          const double v = static_cast<double>(o[i]);
          o[i] = static_cast<T>(v * static_cast<double>(static_cast<T>(sigmoid(v))));
        }
      }
    } else {
      fail("Conv needs float inputs");
    }
  });
  return out;
}

Outputs conv(const Node &node, const Inputs &in) {
  return single(float_conv(node, *in[0], *in[1], in.size() > 2 ? in[2] : nullptr, nullptr));
}

Outputs conv_integer(const Node &node, const Inputs &in) {
  const Tensor *xzp = in.size() > 2 ? in[2] : nullptr;
  const Tensor *wzp = in.size() > 3 ? in[3] : nullptr;
  return single(integer_conv(node, *in[0], xzp, *in[1], wzp));
}

Outputs qlinear_conv(const Node &node, const Inputs &in) {
  // x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B
  const Tensor &x = *in[0], &w = *in[3];
  const Tensor *bias = in.size() > 8 ? in[8] : nullptr;
  Tensor acc = integer_conv(node, x, in[2], w, in[5]);
  if (bias) add_bias(acc, *bias);
  double sx = in[1]->as_double(0), sy = in[6]->as_double(0);
  const Tensor &sw = *in[4];
  int64_t zy = in.size() > 7 && in[7] ? in[7]->as_int(0) : 0;
  Tensor out(node.outputs[0]->dtype, acc.shape());
  int64_t M = acc.dim(1), P = acc.size() / (acc.dim(0) * M);
  const int32_t *pa = acc.data<int32_t>();
  store_saturated(out, [&](int64_t i) {
    int64_t m = (i / P) % M;
    double scale = sx * (sw.size() == 1 ? sw.as_double(0) : sw.as_double(m)) / sy;
    return std::nearbyint(static_cast<double>(pa[i]) * scale) + static_cast<double>(zy);
  });
  return single(std::move(out));
}

Outputs qconv(const Node &node, const Inputs &in) {
  // Packed operands are computed in plain layout and blocked again: padded channels have
  // zero weights and bias, so the result in the real channels is the same.
  bool packed = node.inputs[0]->layout.blocked;
  Tensor x = packed ? unblock_tensor(*in[0], unblocked_shape(in[0]->shape())) : *in[0];
  Tensor w = packed ? unblock_tensor(*in[1], unblocked_shape(in[1]->shape())) : *in[1];
  const Tensor *bias = in.size() > 2 ? in[2] : nullptr;
  Tensor acc = integer_conv(node, x, nullptr, w, nullptr);
  Requant rq = Requant::from(node);
  Tensor out(DType::kInt8, acc.shape());
  int64_t M = acc.dim(1), P = acc.size() / (acc.dim(0) * M);
  const int32_t *pa = acc.data<int32_t>();
  int8_t *po = out.data<int8_t>();
  for (int64_t i = 0; i < acc.size(); ++i) {
    int64_t m = (i / P) % M;
    int32_t b = bias && m < bias->size() ? bias->data<int32_t>()[m] : 0;
    int32_t v = static_cast<int32_t>(static_cast<uint32_t>(pa[i]) + static_cast<uint32_t>(b));
    po[i] = rq.apply(v, m);
  }
  if (in.size() > 3 && in[3]) {  // a fused residual add (graph/passes/fuse_residual_adds.h)
    const Tensor skip = packed ? unblock_tensor(*in[3], unblocked_shape(in[3]->shape())) : *in[3];
    out = residual_add(node, out, skip);
  }
  if (node.attrs.has("pool_kernel_shape")) out = fused_max_pool(node, out);
  if (packed) {
    const Layout &l = node.outputs[0]->layout;
    out = block_tensor(out, l.block_n, l.block_c);
  }
  return single(std::move(out));
}

Outputs conv_transpose(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0], &w = *in[1];
  const Tensor *b = in.size() > 2 ? in[2] : nullptr;
  if (x.dtype() != DType::kFloat32) fail("ConvTranspose needs float32 inputs");
  std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  Window window = make_transpose_window(node.attrs, spatial, kernel);
  // Swap the roles of input and output: the transposed window maps output positions
  // (window.out) to input positions (window.in).
  Win3 w3 = to_win3(window);
  int64_t group = node.attrs.get_int("group", 1);
  int64_t N = x.dim(0), C = x.dim(1), Cg = C / group, Mg = w.dim(1), M = Mg * group;
  int64_t K = w3.k_size(), Pin = w3.in_size(), Pout = w3.out_size();
  Tensor out(DType::kFloat32, node.outputs[0]->shape);
  float *po = out.data<float>();
  RowMatrix<float> cols(Mg * K, Pin);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t g = 0; g < group; ++g) {
      Eigen::Map<const RowMatrix<float>> wm(w.data<float>() + g * Cg * Mg * K, Cg, Mg * K);
      Eigen::Map<const RowMatrix<float>> xm(x.data<float>() + (n * C + g * Cg) * Pin, Cg, Pin);
      cols.noalias() = wm.transpose() * xm;
      for (int64_t m = 0; m < Mg; ++m) {
        float *om = po + (n * M + g * Mg + m) * Pout;
        for (int64_t kd = 0; kd < w3.k[0]; ++kd)
          for (int64_t kh = 0; kh < w3.k[1]; ++kh)
            for (int64_t kw = 0; kw < w3.k[2]; ++kw) {
              const float *crow = &cols(m * K + (kd * w3.k[1] + kh) * w3.k[2] + kw, 0);
              for (int64_t id = 0; id < w3.in[0]; ++id) {
                int64_t od = id * w3.s[0] + kd * w3.d[0] - w3.pb[0];
                if (od < 0 || od >= w3.out[0]) continue;
                for (int64_t ih = 0; ih < w3.in[1]; ++ih) {
                  int64_t oh = ih * w3.s[1] + kh * w3.d[1] - w3.pb[1];
                  if (oh < 0 || oh >= w3.out[1]) continue;
                  for (int64_t iw = 0; iw < w3.in[2]; ++iw) {
                    int64_t ow = iw * w3.s[2] + kw * w3.d[2] - w3.pb[2];
                    if (ow < 0 || ow >= w3.out[2]) continue;
                    om[(od * w3.out[1] + oh) * w3.out[2] + ow] +=
                        crow[(id * w3.in[1] + ih) * w3.in[2] + iw];
                  }
                }
              }
            }
        if (b) {
          for (int64_t p = 0; p < Pout; ++p) om[p] += b->data<float>()[g * Mg + m];
        }
      }
    }
  }
  return single(std::move(out));
}

}  // namespace vacc::graph::ops

namespace vacc::graph::ops {
namespace {

// Conv-family output shape: x [N, C, spatial...], w [M, C/group, kernel...].
Shape conv_shape(Node &n, const Value &x, const Value &w) {
  if (x.rank() < 3) fail("input '{}' (X) has rank {}, expected at least 3", x.name, x.rank());
  if (w.rank() != x.rank()) {
    fail("weight '{}' has shape {}, expected rank {} like the input {}", w.name, shape_str(w.shape),
         x.rank(), shape_str(x.shape));
  }
  int64_t group = n.attrs.get_int("group", 1);
  if (group <= 0) fail("attribute 'group' must be positive, got {}", group);
  if (x.shape[1] != w.shape[1] * group) {
    fail("input channels {} do not match weight '{}' {} with group {} (expects {} channels)",
         x.shape[1], w.name, shape_str(w.shape), group, w.shape[1] * group);
  }
  if (w.shape[0] % group != 0) {
    fail("output channels {} are not a multiple of group {}", w.shape[0], group);
  }
  std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  Window win = make_window(n.attrs, spatial, kernel, false);
  Shape out = {x.shape[0], w.shape[0]};
  out.insert(out.end(), win.out.begin(), win.out.end());
  return out;
}

void infer_conv(Node &n) {
  Value &x = input_of(n, 0, "X"), &w = input_of(n, 1, "W");
  require_float(x, "X");
  require_dtype(w, "W", x.dtype);
  Shape out = conv_shape(n, x, w);
  check_bias(n.input(2), w.shape[0]);
  set_out(n, 0, x.dtype, out);
}

void infer_conv_integer(Node &n) {
  Value &x = input_of(n, 0, "x"), &w = input_of(n, 1, "w");
  require_int8ish(x, "x");
  require_int8ish(w, "w");
  set_out(n, 0, DType::kInt32, conv_shape(n, x, w));
}

void infer_qlinear_conv(Node &n) {
  Value &x = input_of(n, 0, "x"), &w = input_of(n, 3, "w");
  require_int8ish(x, "x");
  require_int8ish(w, "w");
  input_of(n, 1, "x_scale");
  input_of(n, 4, "w_scale");
  input_of(n, 6, "y_scale");
  Shape out = conv_shape(n, x, w);
  check_bias(n.input(8), w.shape[0]);
  set_out(n, 0, zero_point_dtype(n, 7, DType::kUInt8), out);
}

// vacc.QConv: int8 x and w, int32 bias, requantized to int8. Packed operands
// (pack_layout.h) are computed on their plain, channel-padded shapes.
void infer_qconv(Node &n) {
  Value x = input_of(n, 0, "x"), w = input_of(n, 1, "w");
  require_dtype(x, "x", DType::kInt8);
  require_dtype(w, "w", DType::kInt8);
  bool packed = x.layout.blocked;
  if (packed) {
    if (!w.layout.blocked) fail("packed input with unpacked weights");
    x.shape = unblocked_shape(x.shape);
    w.shape = unblocked_shape(w.shape);
  }
  Shape out = conv_shape(n, x, w);
  check_bias(n.input(2), w.shape[0]);
  check_requant_attrs(n, w.shape[0]);
  if (n.attrs.has("pool_kernel_shape")) out = fused_max_pool_shape(n, out);
  if (packed) {
    int64_t bn = n.attrs.get_int("out_block_n"), bc = n.attrs.get_int("out_block_c");
    out = blocked_shape(out, bn, bc);
    set_out(n, 0, DType::kInt8, out);
    n.outputs[0]->layout = {true, static_cast<int>(bn), static_cast<int>(bc)};
  } else {
    set_out(n, 0, DType::kInt8, out);
  }
  // A fused residual add's skip tensor (graph/passes/fuse_residual_adds.h): the output's
  // shape and layout.
  if (const Value *skip = n.input(3)) {
    if (skip->dtype != DType::kInt8 || skip->shape != out)
      fail("residual input '{}' {} {} must be int8 of the output's shape {}", skip->name,
           dtype_name(skip->dtype), shape_str(skip->shape), shape_str(out));
  }
}

void infer_conv_transpose(Node &n) {
  Value &x = input_of(n, 0, "X"), &w = input_of(n, 1, "W");
  require_float(x, "X");
  if (x.rank() < 3 || w.rank() != x.rank()) {
    fail("input {} and weight {} must have the same rank >= 3", shape_str(x.shape),
         shape_str(w.shape));
  }
  int64_t group = n.attrs.get_int("group", 1);
  if (x.shape[1] != w.shape[0]) {
    fail("input channels {} differ from the weight's first dimension {}", x.shape[1], w.shape[0]);
  }
  std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  Window win = make_transpose_window(n.attrs, spatial, kernel);
  Shape out = {x.shape[0], w.shape[1] * group};
  out.insert(out.end(), win.out.begin(), win.out.end());
  check_bias(n.input(2), out[1]);
  set_out(n, 0, x.dtype, out);
}

int64_t conv_macs(const Node &node) {
  const int64_t macs = weight_macs(node, node.op == OpKind::kQLinearConv ? 3 : 1);
  if (!node.attrs.has("pool_kernel_shape")) return macs;
  // A fused pool's output is pooled: the convolution computes its whole grid.
  const Value &x = *node.inputs[0], &w = *node.inputs[1], &y = *node.outputs[0];
  const Window win =
      make_window(node.attrs, {x.shape[2], x.shape[3]}, {w.shape[2], w.shape[3]}, false);
  const int64_t pooled = y.shape[2] * y.shape[3];
  return pooled ? macs / pooled * win.out[0] * win.out[1] : 0;
}

}  // namespace

void add_conv_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kConv,
                  .name = "Conv",
                  .onnx = true,
                  .infer = infer_conv,
                  .reference = conv,
                  .quantize = QuantRule::kConv,
                  .macs = conv_macs,
                  .cpu_blocking = CpuBlocking::kConv});
  defs.push_back({.op = OpKind::kConvTranspose,
                  .name = "ConvTranspose",
                  .onnx = true,
                  .infer = infer_conv_transpose,
                  .reference = conv_transpose});
  defs.push_back({.op = OpKind::kConvInteger,
                  .name = "ConvInteger",
                  .onnx = true,
                  .opset_min = 10,
                  .infer = infer_conv_integer,
                  .reference = conv_integer,
                  .macs = conv_macs});
  defs.push_back({.op = OpKind::kQLinearConv,
                  .name = "QLinearConv",
                  .onnx = true,
                  .opset_min = 10,
                  .infer = infer_qlinear_conv,
                  .reference = qlinear_conv,
                  .macs = conv_macs});
  defs.push_back({.op = OpKind::kQConv,
                  .name = "vacc.QConv",
                  .infer = infer_qconv,
                  .reference = qconv,
                  .macs = conv_macs,
                  .accel_operands = AccelOperands::kGroupedGemm});
}

}  // namespace vacc::graph::ops
