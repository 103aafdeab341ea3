// Pooling: MaxPool (any dtype, with the optional Indices output), AveragePool
// (count_include_pad, ceil_mode) and GlobalAveragePool, on 1- to 3-D spatial shapes; vacc's
// int8 average pool (vacc.QAveragePool, 2-D, graph/qpool.h). On a blocked input (the
// accelerator's NCHWnc, pack_layout.h, or the CPU's NCHWc, block_cpu_layout.h) a pool is
// computed on the plain, channel-padded form and blocked again alike.
#include <limits>

#include "graph/registry/families.h"
#include "graph/window.h"
#include "vacc/graph/passes/block_cpu_layout.h"
#include "vacc/graph/qpool.h"

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

// A pooling kernel on a blocked input (the CPU's NCHWc layout, passes/block_cpu_layout.h, or
// the accelerator's NCHWnc, pack_layout.h): computed on the plain form, padded channels
// included, and blocked again alike.
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

// vacc.QAveragePool on a plain int8 x (graph/qpool.h).
Outputs plain_qaverage_pool(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  const int scale_bits = static_cast<int>(node.attrs.get_int("scale_bits"));
  const int rshift = static_cast<int>(node.attrs.get_int("rshift"));
  const int64_t lo = node.attrs.get_int("clip_min", -128), hi = node.attrs.get_int("clip_max", 127);
  const bool include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
  const int64_t H = x.dim(2), W = x.dim(3);
  const Window w = make_window(node.attrs, {H, W}, node.attrs.get_ints("kernel_shape"),
                               node.attrs.get_int("ceil_mode", 0) != 0);
  Tensor out(DType::kInt8, {x.dim(0), x.dim(1), w.out[0], w.out[1]});
  const int8_t *px = x.data<int8_t>();
  int8_t *po = out.data<int8_t>();
  // The counted positions of each axis: the input, or the input and its explicit padding.
  const int64_t lo_h = include_pad ? -w.pad_begin[0] : 0,
                hi_h = H + (include_pad ? w.pad_end[0] : 0);
  const int64_t lo_w = include_pad ? -w.pad_begin[1] : 0,
                hi_w = W + (include_pad ? w.pad_end[1] : 0);
  for (int64_t plane = 0; plane < x.dim(0) * x.dim(1); ++plane)
    for (int64_t oh = 0; oh < w.out[0]; ++oh)
      for (int64_t ow = 0; ow < w.out[1]; ++ow) {
        int64_t sum = 0;
        for (int64_t kh = 0; kh < w.kernel[0]; ++kh) {
          const int64_t ih = oh * w.stride[0] + kh - w.pad_begin[0];
          if (ih < 0 || ih >= H) continue;
          for (int64_t kw = 0; kw < w.kernel[1]; ++kw) {
            const int64_t iw = ow * w.stride[1] + kw - w.pad_begin[1];
            if (iw >= 0 && iw < W) sum += px[(plane * H + ih) * W + iw];
          }
        }
        const int64_t n =
            qpool_axis_count(oh, w.stride[0], w.kernel[0], w.pad_begin[0], lo_h, hi_h) *
            qpool_axis_count(ow, w.stride[1], w.kernel[1], w.pad_begin[1], lo_w, hi_w);
        const int64_t m = n ? qpool_multiplier(n, scale_bits) : 0;
        po[(plane * w.out[0] + oh) * w.out[1] + ow] = qpool_output(sum, m, rshift, lo, hi);
      }
  return single(std::move(out));
}

Outputs plain_average_pool(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  Pool3 p = pool_window(node, x.shape());
  bool include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
  Tensor out(x.dtype(), pooled(x, p));
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

Outputs average_pool(const Node &node, const Inputs &in) {
  return blocked_pool(node, in, plain_average_pool);
}

Shape fused_max_pool_shape(const Node &node, const Shape &conv) {
  const std::vector<int64_t> k = node.attrs.get_ints("pool_kernel_shape");
  const std::vector<int64_t> s = node.attrs.get_ints("pool_strides", {1, 1});
  if (conv.size() != 4 || k.size() != 2 || s.size() != 2 || k[0] <= 0 || k[1] <= 0 || s[0] <= 0 ||
      s[1] <= 0 || k[0] > conv[2] || k[1] > conv[3])
    fail("a fused pool's window (pool_kernel_shape, pool_strides) does not fit the output {}",
         shape_str(conv));
  return {conv[0], conv[1], (conv[2] - k[0]) / s[0] + 1, (conv[3] - k[1]) / s[1] + 1};
}

Tensor fused_max_pool(const Node &node, const Tensor &y) {
  const std::vector<int64_t> k = node.attrs.get_ints("pool_kernel_shape");
  const std::vector<int64_t> s = node.attrs.get_ints("pool_strides", {1, 1});
  Tensor out(y.dtype(), fused_max_pool_shape(node, y.shape()));
  const int64_t H = y.dim(2), W = y.dim(3), OH = out.dim(2), OW = out.dim(3);
  const int8_t *py = y.data<int8_t>();
  int8_t *po = out.data<int8_t>();
  for (int64_t plane = 0; plane < y.dim(0) * y.dim(1); ++plane)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int8_t best = std::numeric_limits<int8_t>::lowest();
        for (int64_t kh = 0; kh < k[0]; ++kh)
          for (int64_t kw = 0; kw < k[1]; ++kw)
            best = std::max(best, py[(plane * H + oh * s[0] + kh) * W + ow * s[1] + kw]);
        po[(plane * OH + oh) * OW + ow] = best;
      }
  return out;
}

Outputs qaverage_pool(const Node &node, const Inputs &in) {
  return blocked_pool(node, in, plain_qaverage_pool);
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

// vacc.QAveragePool: int8, 2-D, AveragePool's window attributes and graph/qpool.h's.
void infer_qaverage_pool(Node &n) {
  Value &x = input_of(n, 0, "x");
  require_dtype(x, "x", DType::kInt8);
  if (x.rank() != (x.layout.blocked ? 6 : 4))
    fail("input '{}' has rank {}, expected a 2-D pool's", x.name, x.rank());
  const int64_t scale_bits = n.attrs.get_int("scale_bits", -1),
                rshift = n.attrs.get_int("rshift", 0);
  if (scale_bits < 0 || scale_bits > kQPoolMaxScaleBits)
    fail("attribute 'scale_bits' = {} must lie in [0, {}]", scale_bits, kQPoolMaxScaleBits);
  if (rshift < 1 || rshift > 30) fail("attribute 'rshift' = {} must lie in [1, 30]", rshift);
  const int64_t lo = n.attrs.get_int("clip_min", -128), hi = n.attrs.get_int("clip_max", 127);
  if (lo < -128 || hi > 127 || lo > hi) fail("clip bounds [{}, {}] must be an int8 range", lo, hi);
  for (int64_t d : n.attrs.get_ints("dilations", {1, 1}))
    if (d != 1) fail("a dilated window (dilations {})", d);
  set_out(n, 0, DType::kInt8, pooled_shape(n, x, true));
  set_blocked_like(n, x);
}

void infer_average_pool(Node &n) {
  Value &x = input_of(n, 0, "X");
  require_float(x, "X");
  set_out(n, 0, x.dtype, pooled_shape(n, x, true));
  set_blocked_like(n, x);
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

// A MaxPool whose Indices output nobody reads: the CPU's blocked pool has no indices.
bool without_indices(const Node &node) {
  return node.outputs.size() < 2 || !node.outputs[1];
}

}  // namespace

void add_pool_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kMaxPool,
                  .name = "MaxPool",
                  .onnx = true,
                  .infer = infer_max_pool,
                  .reference = max_pool,
                  .quantize = QuantRule::kPassThrough,
                  .selects_elements = true,
                  .cpu_blocking = CpuBlocking::kPool,
                  .cpu_blocking_applies = without_indices,
                  .accel_operands = AccelOperands::kWindow});
  defs.push_back({.op = OpKind::kAveragePool,
                  .name = "AveragePool",
                  .onnx = true,
                  .infer = infer_average_pool,
                  .reference = average_pool,
                  .quantize = QuantRule::kAvgPool,
                  .cpu_blocking = CpuBlocking::kPool,
                  .cpu_blocking_applies = blocked_average_pool_supported});
  defs.push_back({.op = OpKind::kGlobalAveragePool,
                  .name = "GlobalAveragePool",
                  .onnx = true,
                  .infer = infer_global_average_pool,
                  .reference = global_average_pool,
                  .quantize = QuantRule::kAvgPool,
                  .cpu_blocking = CpuBlocking::kPool});
  defs.push_back({.op = OpKind::kQAveragePool,
                  .name = "vacc.QAveragePool",
                  .infer = infer_qaverage_pool,
                  .reference = qaverage_pool,
                  .accel_operands = AccelOperands::kWindow});
}

}  // namespace vacc::graph::ops
