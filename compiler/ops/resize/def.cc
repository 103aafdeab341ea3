// Resize (opsets 11-17): nearest (round_prefer_floor, round_prefer_ceil, floor, ceil), linear
// and cubic (cubic_coeff_a, exclude_outside) interpolation over every axis, with the coordinate
// transformations half_pixel, pytorch_half_pixel, align_corners, asymmetric,
// tf_half_pixel_for_nn and tf_crop_and_resize (roi, extrapolation_value), as ONNX's reference
// computes them. The output shape comes from the constant sizes, or from the constant scales
// (floor(input * scale)). Every axis samples its input at a few taps (resize_axes), shared by the
// reference kernel here and the CPU kernel (cpu.cc beside it).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "graph/registry/families.h"

namespace vacc::graph::ops {

namespace {

const char *const kModes[] = {"nearest", "linear", "cubic"};
const char *const kTransforms[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                   "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
const char *const kNearestModes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

// The attribute's value when it is one of `choices`, else a vacc::Error listing them.
template <size_t N>
std::string choice(const Node &n, const char *attr, const char *const (&choices)[N]) {
  const std::string v = n.attrs.get_string(attr, choices[0]);
  std::string list;
  for (const char *c : choices) {
    if (v == c) return v;
    list += list.empty() ? c : std::string(", ") + c;
  }
  fail("attribute '{}' is '{}'; vacc's Resize supports {}", attr, v, list);
}

// The constant input i as doubles (empty when absent or empty).
std::vector<double> constant_values(const Node &n, size_t i, const char *role) {
  const Value *v = n.input(i);
  if (!v) return {};
  VACC_CHECK(v->is_constant()) << "Resize's " << role << " is checked constant by its inference";
  std::vector<double> out;
  for (int64_t k = 0; k < v->constant->size(); ++k) out.push_back(v->constant->as_double(k));
  return out;
}

// ONNX's cubic convolution coefficients for the four taps around a point at `ratio` (0, 1] past
// the second one.
std::vector<double> cubic_coefficients(double ratio, double a) {
  auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };  // 1 < t < 2
  auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };       // t <= 1
  return {far(ratio + 1), near(ratio), near(1 - ratio), far(2 - ratio)};
}

}  // namespace

std::vector<ResizeAxis> resize_axes(const Node &node, const Shape &x, const Shape &y) {
  const std::string mode = choice(node, "mode", kModes);
  const std::string transform = choice(node, "coordinate_transformation_mode", kTransforms);
  const std::string nearest = choice(node, "nearest_mode", kNearestModes);
  const double cubic_a = node.attrs.get_float("cubic_coeff_a", -0.75f);
  const bool exclude_outside = node.attrs.get_int("exclude_outside", 0) != 0;
  const int rank = static_cast<int>(x.size());
  const std::vector<double> roi = constant_values(node, 1, "roi");
  std::vector<double> scales = constant_values(node, 2, "scales");
  if (node.input(3) && !constant_values(node, 3, "sizes").empty()) scales.clear();
  if (transform == "tf_crop_and_resize" && static_cast<int>(roi.size()) != 2 * rank)
    fail("tf_crop_and_resize needs an roi of {} values (starts and ends), got {}", 2 * rank,
         roi.size());
  std::vector<ResizeAxis> axes(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t in = x[d], out = y[d];
    // The scale the coordinates use: the given one, or the ratio of the sizes.
    const double scale = scales.empty() ? static_cast<double>(out) / in : scales[d];
    const double out_width = scale * in;
    ResizeAxis &axis = axes[d];
    std::vector<std::map<int64_t, double>> taps(out);
    axis.outside.assign(out, false);
    for (int64_t o = 0; o < out; ++o) {
      double xo;
      if (transform == "align_corners") {
        xo = out_width == 1 ? 0 : o * (in - 1) / (out_width - 1);
      } else if (transform == "asymmetric") {
        xo = o / scale;
      } else if (transform == "pytorch_half_pixel") {
        xo = out_width == 1 ? -0.5 : (o + 0.5) / scale - 0.5;
      } else if (transform == "tf_half_pixel_for_nn") {
        xo = (o + 0.5) / scale;
      } else if (transform == "tf_crop_and_resize") {
        const double start = roi[d], end = roi[d + rank];
        xo = out_width == 1 ? (end - start) * (in - 1) / 2
                            : o * (end - start) * (in - 1) / (out_width - 1);
        xo += start * (in - 1);
        axis.outside[o] = xo < 0 || xo > in - 1;
      } else {
        xo = (o + 0.5) / scale - 0.5;
      }
      const bool whole = xo == std::floor(xo);
      // The tap before the point (the point itself counts as the later of two), and how far past.
      const int64_t base =
          whole ? static_cast<int64_t>(xo) - 1 : static_cast<int64_t>(std::floor(xo));
      const double ratio = xo - base;
      auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
      if (mode == "nearest") {
        bool later = true;  // the point itself when whole
        if (!whole) {
          later = nearest == "round_prefer_floor"  ? ratio > 0.5
                  : nearest == "round_prefer_ceil" ? ratio >= 0.5
                                                   : nearest == "ceil";
        }
        taps[o][clamp(later ? base + 1 : base)] += 1;
      } else if (mode == "linear") {
        taps[o][clamp(base)] += 1 - ratio;
        taps[o][clamp(base + 1)] += ratio;
      } else {
        std::vector<double> c = cubic_coefficients(ratio, cubic_a);
        if (exclude_outside) {
          double sum = 0;
          for (int k = 0; k < 4; ++k) {
            const int64_t i = base - 1 + k;
            if (i < 0 || i >= in) c[k] = 0;
            sum += c[k];
          }
          for (double &v : c) v /= sum;
        }
        for (int k = 0; k < 4; ++k) taps[o][clamp(base - 1 + k)] += c[k];
      }
    }
    // Taps of zero weight dropped; an axis whose every output reads its own index is a copy.
    axis.identity = out == in;
    size_t count = 1;
    for (int64_t o = 0; o < out; ++o) {
      for (auto it = taps[o].begin(); it != taps[o].end();)
        it = it->second == 0 ? taps[o].erase(it) : std::next(it);
      count = std::max(count, taps[o].size());
      axis.identity &= taps[o].size() == 1 && taps[o].begin()->first == o &&
                       taps[o].begin()->second == 1 && !axis.outside[o];
    }
    axis.taps = static_cast<int64_t>(count);
    for (int64_t o = 0; o < out; ++o) {
      size_t k = 0;
      for (const auto &[i, w] : taps[o]) {
        axis.index.push_back(i);
        axis.weight.push_back(w);
        ++k;
      }
      for (; k < count; ++k) {
        axis.index.push_back(0);
        axis.weight.push_back(0);
      }
    }
  }
  return axes;
}

namespace {

void infer_resize(Node &n) {
  Value &x = input_of(n, 0, "X");
  if (x.rank() == 0) fail("cannot resize a scalar");
  for (auto [i, role] : {std::pair{1, "roi"}, std::pair{2, "scales"}, std::pair{3, "sizes"}}) {
    if (n.input(i)) const_input(n, i, role);
  }
  const std::string mode = choice(n, "mode", kModes);
  choice(n, "coordinate_transformation_mode", kTransforms);
  choice(n, "nearest_mode", kNearestModes);
  if (mode != "nearest" && !dtype_is_float(x.dtype))
    fail("mode '{}' interpolates; the input '{}' is {}, expected a float type", mode, x.name,
         dtype_name(x.dtype));
  const std::vector<double> scales = constant_values(n, 2, "scales");
  const std::vector<double> sizes = constant_values(n, 3, "sizes");
  if (scales.empty() == sizes.empty())
    fail("give exactly one of the scales and sizes inputs (scales has {} values, sizes {})",
         scales.size(), sizes.size());
  const std::vector<double> &given = sizes.empty() ? scales : sizes;
  if (static_cast<int>(given.size()) != x.rank())
    fail("{} has {} values for an input of rank {}", sizes.empty() ? "scales" : "sizes",
         given.size(), x.rank());
  Shape out(x.rank());
  for (int d = 0; d < x.rank(); ++d) {
    if (given[d] <= 0)
      fail("{} has a value {} that is not positive", sizes.empty() ? "scales" : "sizes", given[d]);
    out[d] = sizes.empty() ? static_cast<int64_t>(std::floor(x.shape[d] * scales[d]))
                           : static_cast<int64_t>(sizes[d]);
  }
  set_out(n, 0, x.dtype, out);
  resize_axes(n, x.shape, out);  // checks roi
}

Outputs resize(const Node &node, const Inputs &in) {
  const Tensor &x = *in[0];
  const Shape &y_shape = node.outputs[0]->shape;
  const std::vector<ResizeAxis> axes = resize_axes(node, x.shape(), y_shape);
  const double extrapolation = node.attrs.get_float("extrapolation_value", 0.0f);
  const int rank = x.rank();
  std::vector<int64_t> stride(rank, 1), idx(rank, 0);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * x.dim(d + 1);
  std::vector<int> sampled;  // axes that are not copies
  int64_t combos = 1;
  for (int d = 0; d < rank; ++d) {
    if (axes[d].identity) continue;
    sampled.push_back(d);
    combos *= axes[d].taps;
  }
  Tensor out(x.dtype(), y_shape);
  const int es = dtype_size(x.dtype());
  for (int64_t i = 0; i < out.size(); ++i) {
    int64_t base = 0;
    bool outside = false;
    for (int d = 0; d < rank; ++d) {
      if (axes[d].identity) base += idx[d] * stride[d];
      outside |= axes[d].outside[idx[d]];
    }
    if (!dtype_is_float(x.dtype())) {  // nearest: one tap per axis, copied
      int64_t from = base;
      for (int d : sampled) from += axes[d].index[idx[d] * axes[d].taps] * stride[d];
      std::memcpy(out.raw() + i * es, x.raw() + from * es, es);
    } else {
      double sum = 0;
      for (int64_t c = 0; c < combos && !outside; ++c) {
        int64_t from = base, rest = c;
        double w = 1;
        for (int d : sampled) {
          const int64_t k = idx[d] * axes[d].taps + rest % axes[d].taps;
          rest /= axes[d].taps;
          from += axes[d].index[k] * stride[d];
          w *= axes[d].weight[k];
        }
        if (w != 0) sum += w * x.as_double(from);
      }
      visit_dtype(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        out.data<T>()[i] = static_cast<T>(outside ? extrapolation : sum);
      });
    }
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < y_shape[d]) break;
      idx[d] = 0;
    }
  }
  Outputs outs;
  outs.push_back(std::move(out));
  return outs;
}

}  // namespace

void add_resize_ops(std::vector<OpDef> &defs) {
  // Resize-10 has neither roi nor the coordinate transformations: not imported.
  defs.push_back({.op = OpKind::kResize,
                  .name = "Resize",
                  .onnx = true,
                  .opset_min = 11,
                  .infer = infer_resize,
                  .reference = resize});
}

}  // namespace vacc::graph::ops
