// BatchNormalization (inference, and training mode's batch statistics), LayerNormalization,
// Softmax, LogSoftmax and Hardmax.
#include <cmath>
#include <type_traits>

#include "graph/registry/families.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::ops {

Outputs batch_norm(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  if (x.dtype() != DType::kFloat32) fail("BatchNormalization needs float32 inputs");
  std::vector<float> scale = in[1]->to_float_vector(), bias = in[2]->to_float_vector();
  std::vector<float> mean = in[3]->to_float_vector(), var = in[4]->to_float_vector();
  float eps = node.attrs.get_float("epsilon", 1e-5f);
  float momentum = node.attrs.get_float("momentum", 0.9f);
  bool training = node.attrs.get_int("training_mode", 0) != 0;
  int64_t N = x.dim(0), C = x.dim(1), inner = x.size() / std::max<int64_t>(N * C, 1);
  const float *px = x.data<float>();
  std::vector<float> use_mean = mean, use_var = var;
  if (training) {
    for (int64_t c = 0; c < C; ++c) {
      double sum = 0, sq = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i) {
          double v = px[(n * C + c) * inner + i];
          sum += v;
          sq += v * v;
        }
      double count = static_cast<double>(N * inner);
      double m = sum / count;
      use_mean[c] = static_cast<float>(m);
      use_var[c] = static_cast<float>(sq / count - m * m);
    }
  }
  Tensor y(DType::kFloat32, x.shape());
  float *py = y.data<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      float a = scale[c] / std::sqrt(use_var[c] + eps);
      float b = bias[c] - use_mean[c] * a;
      for (int64_t i = 0; i < inner; ++i) {
        int64_t k = (n * C + c) * inner + i;
        py[k] = px[k] * a + b;
      }
    }
  Outputs outs;
  outs.push_back(std::move(y));
  if (training) {
    Tensor rm(DType::kFloat32, {C}), rv(DType::kFloat32, {C});
    for (int64_t c = 0; c < C; ++c) {
      rm.data<float>()[c] = mean[c] * momentum + use_mean[c] * (1 - momentum);
      rv.data<float>()[c] = var[c] * momentum + use_var[c] * (1 - momentum);
    }
    outs.push_back(std::move(rm));
    outs.push_back(std::move(rv));
  }
  return outs;
}

// LayerNormalization: each row of the axes from `axis` on normalized to mean 0 and variance 1
// (moments in double), scaled and shifted by Scale and B broadcast over those axes; the optional
// outputs Mean and InvStdDev hold each row's mean and 1 / sqrt(variance + epsilon).
Outputs layer_norm(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  const int axis = normalize_axis(node.attrs.get_int("axis", -1), x.rank(), "axis");
  const double eps = node.attrs.get_float("epsilon", 1e-5f);
  const Shape norm(x.shape().begin() + axis, x.shape().end());
  const int64_t cols = num_elements(norm), rows = cols ? x.size() / cols : 0;
  const std::vector<int64_t> scale_at = broadcast_offsets(in[1]->shape(), norm);
  std::vector<int64_t> bias_at;
  const bool has_bias = in.size() > 2 && in[2];
  if (has_bias) bias_at = broadcast_offsets(in[2]->shape(), norm);
  Tensor y(x.dtype(), x.shape());
  const Shape stat_shape = node.outputs.size() > 1 && node.outputs[1]   ? node.outputs[1]->shape
                           : node.outputs.size() > 2 && node.outputs[2] ? node.outputs[2]->shape
                                                                        : Shape{rows};
  Tensor mean_t(DType::kFloat32, stat_shape), inv_t(DType::kFloat32, stat_shape);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, sq = 0;
    for (int64_t c = 0; c < cols; ++c) sum += x.as_double(r * cols + c);
    const double mean = sum / cols;
    for (int64_t c = 0; c < cols; ++c) {
      const double d = x.as_double(r * cols + c) - mean;
      sq += d * d;
    }
    const double inv = 1.0 / std::sqrt(sq / cols + eps);
    visit_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        T *py = y.data<T>() + r * cols;
        for (int64_t c = 0; c < cols; ++c) {
          double v = (x.as_double(r * cols + c) - mean) * inv * in[1]->as_double(scale_at[c]);
          if (has_bias) v += in[2]->as_double(bias_at[c]);
          py[c] = static_cast<T>(v);
        }
      }
    });
    mean_t.data<float>()[r] = static_cast<float>(mean);
    inv_t.data<float>()[r] = static_cast<float>(inv);
  }
  Outputs outs;
  outs.push_back(std::move(y));
  outs.push_back(std::move(mean_t));
  outs.push_back(std::move(inv_t));
  return outs;
}

// Softmax, LogSoftmax and Hardmax along `axis` (or over the coerced 2-D view of opsets below
// 13): per row, the maximum, then exp(x - max) summed in double and divided (Softmax), x - max -
// log(sum) (LogSoftmax), or 1 at the first maximum and 0 elsewhere (Hardmax).
Outputs softmax(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  if (x.dtype() != DType::kFloat32) fail("{} needs float32 inputs", op_name(node.op));
  bool coerce_2d = node.attrs.get_int("coerce_2d", 0) != 0;
  int axis = normalize_axis(node.attrs.get_int("axis", -1), x.rank(), "axis", coerce_2d);
  int64_t outer = 1, len = 1, inner = 1;
  for (int i = 0; i < x.rank(); ++i) {
    if (i < axis)
      outer *= x.dim(i);
    else if (i == axis || coerce_2d)
      len *= x.dim(i);
    else
      inner *= x.dim(i);
  }
  Tensor y(DType::kFloat32, x.shape());
  const float *px = x.data<float>();
  float *py = y.data<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *src = px + o * len * inner + i;
      float *dst = py + o * len * inner + i;
      if (len == 0) continue;
      float mx = src[0];
      int64_t first_max = 0;
      for (int64_t l = 1; l < len; ++l) {
        if (src[l * inner] > mx) first_max = l;
        mx = std::max(mx, src[l * inner]);
      }
      if (node.op == OpKind::kHardmax) {
        for (int64_t l = 0; l < len; ++l) dst[l * inner] = l == first_max ? 1.0f : 0.0f;
        continue;
      }
      double sum = 0;
      for (int64_t l = 0; l < len; ++l) sum += std::exp(static_cast<double>(src[l * inner] - mx));
      for (int64_t l = 0; l < len; ++l) {
        const double shifted = src[l * inner] - mx;
        dst[l * inner] = static_cast<float>(
            node.op == OpKind::kLogSoftmax ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    }
  Outputs outs;
  outs.push_back(std::move(y));
  return outs;
}

}  // namespace vacc::graph::ops

namespace vacc::graph::ops {
namespace {

void infer_batch_norm(Node &n) {
  Value &x = input_of(n, 0, "X");
  require_float(x, "X");
  if (x.rank() < 2) fail("input has rank {}, expected at least 2", x.rank());
  const char *roles[] = {"scale", "B", "mean", "var"};
  for (int i = 1; i <= 4; ++i) {
    Value &p = input_of(n, i, roles[i - 1]);
    if (p.rank() != 1 || p.shape[0] != x.shape[1]) {
      fail("input '{}' ({}) has shape {}, expected [{}] (one per channel)", p.name, roles[i - 1],
           shape_str(p.shape), x.shape[1]);
    }
  }
  set_out(n, 0, x.dtype, x.shape);
  set_out(n, 1, x.dtype, {x.shape[1]});
  set_out(n, 2, x.dtype, {x.shape[1]});
}

void import_batch_norm(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) {
  if (ctx.opset < 9 && attrs.get_int("spatial", 1) == 0) {
    fail("BatchNormalization with spatial=0 is not supported");
  }
  if (attrs.get_int("training_mode", 0) != 0 && ctx.opset < 14) {
    fail("training_mode is not defined before opset 14");
  }
}

void infer_layer_norm(Node &n) {
  Value &x = input_of(n, 0, "X"), &scale = input_of(n, 1, "Scale");
  require_float(x, "X");
  require_dtype(scale, "Scale", x.dtype);
  const int axis = normalize_axis(n.attrs.get_int("axis", -1), x.rank(), "axis");
  const Shape norm(x.shape.begin() + axis, x.shape.end());
  for (Value *p : {&scale, n.input(2)}) {
    if (p && broadcast_shapes(p->shape, norm) != norm) {
      fail("input '{}' has shape {}, which does not broadcast to the normalized shape {}", p->name,
           shape_str(p->shape), shape_str(norm));
    }
  }
  if (n.input(2)) require_dtype(*n.input(2), "B", x.dtype);
  if (n.attrs.get_int("stash_type", 1) != 1) {
    fail("attribute 'stash_type' is {}; vacc computes the statistics in float (stash_type 1)",
         n.attrs.get_int("stash_type", 1));
  }
  Shape stats(x.shape.begin(), x.shape.begin() + axis);
  stats.resize(x.shape.size(), 1);
  set_out(n, 0, x.dtype, x.shape);
  set_out(n, 1, DType::kFloat32, stats);
  set_out(n, 2, DType::kFloat32, stats);
}

void infer_softmax(Node &n) {
  Value &x = input_of(n, 0, "input");
  require_float(x, "input");
  // The importer makes `axis` explicit; coerce_2d marks opset < 13 semantics.
  normalize_axis(n.attrs.get_int("axis", -1), x.rank(), "axis",
                 n.attrs.get_int("coerce_2d", 0) != 0);
  set_out(n, 0, x.dtype, x.shape);
}

// Before opset 13 Softmax, LogSoftmax and Hardmax flatten to 2-D at `axis` (default 1); since,
// `axis` defaults to -1.
void import_softmax(ImportContext &ctx, Attributes &attrs, std::vector<Value *> &inputs) {
  if (ctx.opset < 13) {
    attrs.set("axis", attrs.get_int("axis", 1));
    attrs.set("coerce_2d", int64_t{1});
  } else {
    attrs.set("axis", attrs.get_int("axis", -1));
  }
}

}  // namespace

void add_normalization_ops(std::vector<OpDef> &defs) {
  defs.push_back({.op = OpKind::kBatchNormalization,
                  .name = "BatchNormalization",
                  .onnx = true,
                  .import = import_batch_norm,
                  .infer = infer_batch_norm,
                  .reference = batch_norm,
                  .cpu_blocking = CpuBlocking::kBatchNorm});
  defs.push_back({.op = OpKind::kLayerNormalization,
                  .name = "LayerNormalization",
                  .onnx = true,
                  .opset_min = 17,
                  .infer = infer_layer_norm,
                  .reference = layer_norm});
  for (auto [op, name] :
       {std::pair{OpKind::kSoftmax, "Softmax"}, std::pair{OpKind::kLogSoftmax, "LogSoftmax"},
        std::pair{OpKind::kHardmax, "Hardmax"}}) {
    defs.push_back({.op = op,
                    .name = name,
                    .onnx = true,
                    .import = import_softmax,
                    .infer = infer_softmax,
                    .reference = softmax});
  }
}

}  // namespace vacc::graph::ops
