// Pooling: MaxPool (any dtype, with the optional Indices output), AveragePool
// (count_include_pad, ceil_mode) and GlobalAveragePool, on 1- to 3-D spatial shapes.
#include <limits>

#include "../window.h"
#include "ops.h"

namespace vacc::graph::ops {

namespace {

struct Pool3 {
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
};

Pool3 pool_window(const Node &node, const Shape &x) {
  std::vector<int64_t> spatial(x.begin() + 2, x.end());
  Window w = make_window(node.attrs, spatial, node.attrs.get_ints("kernel_shape"),
                         node.attrs.get_int("ceil_mode", 0) != 0);
  Pool3 p;
  int lead = 3 - w.rank;
  for (int i = 0; i < 3; ++i) {
    bool real = i >= lead;
    int j = i - lead;
    p.in[i] = real ? w.in[j] : 1;
    p.k[i] = real ? w.kernel[j] : 1;
    p.s[i] = real ? w.stride[j] : 1;
    p.d[i] = real ? w.dilation[j] : 1;
    p.pb[i] = real ? w.pad_begin[j] : 0;
    p.pe[i] = real ? w.pad_end[j] : 0;
    p.out[i] = real ? w.out[j] : 1;
  }
  return p;
}

// The pooled plain shape of x: [N, C, out...] of x's rank.
Shape pooled(const Tensor &x, const Pool3 &p) {
  Shape s = {x.dim(0), x.dim(1)};
  for (int i = 3 - (x.rank() - 2); i < 3; ++i) s.push_back(p.out[i]);
  return s;
}

// A pooling kernel on a blocked input (the CPU's NCHWc layout, passes/block_cpu_layout.h):
// computed on the plain form, padded channels included, and blocked again.
Outputs blocked_pool(const Node &node, const Inputs &in,
                     Outputs (*plain)(const Node &, const Inputs &)) {
  if (!node.inputs[0]->layout.blocked) return plain(node, in);
  const Tensor x = unblock_tensor(*in[0], unblocked_shape(in[0]->shape()));
  Outputs outs = plain(node, {&x});
  const Layout &l = node.inputs[0]->layout;
  outs[0] = block_tensor(outs[0], l.block_n, l.block_c);
  return outs;
}

Outputs plain_max_pool(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  Pool3 p = pool_window(node, x.shape());
  Tensor out(x.dtype(), pooled(x, p));
  bool want_indices = node.outputs.size() > 1 && node.outputs[1];
  Tensor indices(DType::kInt64, want_indices ? node.outputs[1]->shape : Shape{0});
  bool col_major = node.attrs.get_int("storage_order", 0) != 0;
  int64_t planes = x.dim(0) * x.dim(1);
  int64_t in_size = p.in[0] * p.in[1] * p.in[2], out_size = p.out[0] * p.out[1] * p.out[2];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *px = x.data<T>();
    T *po = out.data<T>();
    for (int64_t plane = 0; plane < planes; ++plane) {
      for (int64_t od = 0; od < p.out[0]; ++od)
        for (int64_t oh = 0; oh < p.out[1]; ++oh)
          for (int64_t ow = 0; ow < p.out[2]; ++ow) {
            T best = std::numeric_limits<T>::lowest();
            int64_t best_index = -1;
            for (int64_t kd = 0; kd < p.k[0]; ++kd) {
              int64_t id = od * p.s[0] + kd * p.d[0] - p.pb[0];
              if (id < 0 || id >= p.in[0]) continue;
              for (int64_t kh = 0; kh < p.k[1]; ++kh) {
                int64_t ih = oh * p.s[1] + kh * p.d[1] - p.pb[1];
                if (ih < 0 || ih >= p.in[1]) continue;
                for (int64_t kw = 0; kw < p.k[2]; ++kw) {
                  int64_t iw = ow * p.s[2] + kw * p.d[2] - p.pb[2];
                  if (iw < 0 || iw >= p.in[2]) continue;
                  int64_t i = (id * p.in[1] + ih) * p.in[2] + iw;
                  T v = px[plane * in_size + i];
                  if (best_index < 0 || v > best) {
                    best = v;
                    best_index = col_major ? (iw * p.in[1] + ih) * p.in[0] + id : i;
                  }
                }
              }
            }
            int64_t o = plane * out_size + (od * p.out[1] + oh) * p.out[2] + ow;
            po[o] = best;
            if (want_indices) indices.data<int64_t>()[o] = plane * in_size + best_index;
          }
    }
  });
  Outputs outs;
  outs.push_back(std::move(out));
  if (want_indices) outs.push_back(std::move(indices));
  return outs;
}

Outputs average_pool(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  Pool3 p = pool_window(node, x.shape());
  bool include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
  Tensor out(x.dtype(), node.outputs[0]->shape);
  int64_t planes = x.dim(0) * x.dim(1);
  int64_t in_size = p.in[0] * p.in[1] * p.in[2], out_size = p.out[0] * p.out[1] * p.out[2];
  const float *px = x.data<float>();
  float *po = out.data<float>();
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t od = 0; od < p.out[0]; ++od)
      for (int64_t oh = 0; oh < p.out[1]; ++oh)
        for (int64_t ow = 0; ow < p.out[2]; ++ow) {
          double sum = 0;
          int64_t count = 0, padded_count = 0;
          int64_t o3[3] = {od, oh, ow};
          for (int64_t kd = 0; kd < p.k[0]; ++kd)
            for (int64_t kh = 0; kh < p.k[1]; ++kh)
              for (int64_t kw = 0; kw < p.k[2]; ++kw) {
                int64_t k3[3] = {kd, kh, kw}, i3[3];
                bool inside = true, in_padded = true;
                for (int a = 0; a < 3; ++a) {
                  i3[a] = o3[a] * p.s[a] + k3[a] * p.d[a] - p.pb[a];
                  inside = inside && i3[a] >= 0 && i3[a] < p.in[a];
                  // Positions in the explicit padding count with count_include_pad; those
                  // past it (from ceil_mode) never do.
                  in_padded = in_padded && i3[a] >= -p.pb[a] && i3[a] < p.in[a] + p.pe[a];
                }
                if (in_padded) ++padded_count;
                if (!inside) continue;
                sum += px[plane * in_size + (i3[0] * p.in[1] + i3[1]) * p.in[2] + i3[2]];
                ++count;
              }
          int64_t divisor = include_pad ? padded_count : count;
          po[plane * out_size + (od * p.out[1] + oh) * p.out[2] + ow] =
              divisor ? static_cast<float>(sum / divisor) : 0.0f;
        }
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

Outputs plain_global_average_pool(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  Shape shape = x.shape();
  std::fill(shape.begin() + 2, shape.end(), 1);
  Tensor out(x.dtype(), shape);
  int64_t planes = x.dim(0) * x.dim(1), inner = x.size() / std::max<int64_t>(planes, 1);
  const float *px = x.data<float>();
  for (int64_t i = 0; i < planes; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < inner; ++j) sum += px[i * inner + j];
    out.data<float>()[i] = static_cast<float>(sum / inner);
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

}  // namespace

Outputs max_pool(const Node &node, const Inputs &in) {
  return blocked_pool(node, in, plain_max_pool);
}

Outputs global_average_pool(const Node &node, const Inputs &in) {
  return blocked_pool(node, in, plain_global_average_pool);
}

}  // namespace vacc::graph::ops

namespace vacc::graph::ops {
namespace {

// Blocked inputs (the CPU's NCHWc layout) pool their plain form; the output is blocked alike.
Shape pooled_shape(Node &n, const Value &blocked_x, bool ceil_allowed) {
  Value x = blocked_x;
  if (x.layout.blocked) x.shape = unblocked_shape(x.shape);
  if (x.rank() < 3) fail("input '{}' has rank {}, expected at least 3", x.name, x.rank());
  std::vector<int64_t> kernel = n.attrs.get_ints("kernel_shape");
  if (static_cast<int>(kernel.size()) != x.rank() - 2) {
    fail("attribute 'kernel_shape' has {} values, expected {}", kernel.size(), x.rank() - 2);
  }
  std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  Window win =
      make_window(n.attrs, spatial, kernel, ceil_allowed && n.attrs.get_int("ceil_mode", 0) != 0);
  Shape out = {x.shape[0], x.shape[1]};
  out.insert(out.end(), win.out.begin(), win.out.end());
  if (x.layout.blocked) out = blocked_shape(out, x.layout.block_n, x.layout.block_c);
  return out;
}

void set_blocked_like(Node &n, const Value &x) {
  if (x.layout.blocked && n.outputs[0]) n.outputs[0]->layout = x.layout;
}

void infer_max_pool(Node &n) {
  Value &x = input_of(n, 0, "X");
  Shape out = pooled_shape(n, x, true);
  if (x.layout.blocked && n.outputs.size() > 1 && n.outputs[1])
    fail("a MaxPool on a blocked (NCHWc) input has no Indices output");
  set_out(n, 0, x.dtype, out);
  set_out(n, 1, DType::kInt64, out);
  set_blocked_like(n, x);
}

void infer_average_pool(Node &n) {
  Value &x = input_of(n, 0, "X");
  require_float(x, "X");
  set_out(n, 0, x.dtype, pooled_shape(n, x, true));
}

void infer_global_average_pool(Node &n) {
  Value &x = input_of(n, 0, "X");
  require_float(x, "X");
  if (x.rank() < 3) fail("input has rank {}, expected at least 3", x.rank());
  Shape out = x.shape;
  // Blocked [N, C/bc, S..., bn, bc]: the spatial dimensions sit between the blocks.
  std::fill(out.begin() + 2, out.end() - (x.layout.blocked ? 2 : 0), 1);
  set_out(n, 0, x.dtype, out);
  set_blocked_like(n, x);
}

}  // namespace

void add_pool_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kMaxPool,
                  .name = "MaxPool",
                  .onnx = true,
                  .infer = infer_max_pool,
                  .reference = max_pool,
                  .quantize = QuantRule::kPassThrough});
  defs.push_back({.op = OpKind::kAveragePool,
                  .name = "AveragePool",
                  .onnx = true,
                  .infer = infer_average_pool,
                  .reference = average_pool});
  defs.push_back({.op = OpKind::kGlobalAveragePool,
                  .name = "GlobalAveragePool",
                  .onnx = true,
                  .infer = infer_global_average_pool,
                  .reference = global_average_pool});
}

}  // namespace vacc::graph::ops
