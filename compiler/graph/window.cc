#include "window.h"

#include <fmt/format.h>

#include <cstdint>

namespace vacc::graph {

namespace {
// Window attributes are bounded so that the geometry below (products of a stride or dilation
// with an extent of at most 2^32, sums with pads) stays within 64 bits; a real model's are
// tiny.
constexpr int64_t kMaxWindowAttribute = INT32_MAX;

void check_range(const char *name, const std::vector<int64_t> &values, int64_t lo) {
  for (int64_t x : values) {
    if (x < lo || x > kMaxWindowAttribute)
      fail("attribute '{}' value {} is out of range [{}, {}]", name, x, lo, kMaxWindowAttribute);
  }
}

std::vector<int64_t> per_dim(const Attributes &attrs, const char *name, int rank,
                             int64_t fallback) {
  std::vector<int64_t> v = attrs.get_ints(name, std::vector<int64_t>(rank, fallback));
  if (static_cast<int>(v.size()) != rank) {
    fail("attribute '{}' has {} values, expected {} (one per spatial dimension)", name, v.size(),
         rank);
  }
  for (int64_t x : v) {
    if (x <= 0) fail("attribute '{}' must be positive, got {}", name, fmt::join(v, ","));
  }
  check_range(name, v, 1);
  return v;
}

void explicit_pads(const Attributes &attrs, Window &w) {
  std::vector<int64_t> pads = attrs.get_ints("pads", std::vector<int64_t>(2 * w.rank, 0));
  if (static_cast<int>(pads.size()) != 2 * w.rank) {
    fail("attribute 'pads' has {} values, expected {} (begin and end per spatial dimension)",
         pads.size(), 2 * w.rank);
  }
  for (int i = 0; i < w.rank; ++i) {
    w.pad_begin[i] = pads[i];
    w.pad_end[i] = pads[i + w.rank];
    if (w.pad_begin[i] < 0 || w.pad_end[i] < 0) fail("attribute 'pads' must not be negative");
  }
  check_range("pads", pads, 0);
}
}  // namespace

Window make_window(const Attributes &attrs, const std::vector<int64_t> &in,
                   const std::vector<int64_t> &kernel, bool ceil_mode) {
  Window w;
  w.rank = static_cast<int>(in.size());
  w.in = in;
  w.kernel = kernel;
  if (attrs.has("kernel_shape") && attrs.get_ints("kernel_shape") != kernel) {
    fail("attribute 'kernel_shape' [{}] does not match the weight's spatial shape [{}]",
         fmt::join(attrs.get_ints("kernel_shape"), ","), fmt::join(kernel, ","));
  }
  w.stride = per_dim(attrs, "strides", w.rank, 1);
  w.dilation = per_dim(attrs, "dilations", w.rank, 1);
  w.pad_begin.assign(w.rank, 0);
  w.pad_end.assign(w.rank, 0);
  w.out.assign(w.rank, 0);
  std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
  for (int i = 0; i < w.rank; ++i) {
    if (kernel[i] <= 0) fail("kernel dimension {} is {}", i, kernel[i]);
  }
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int i = 0; i < w.rank; ++i) {
      int64_t extent = (kernel[i] - 1) * w.dilation[i] + 1;
      int64_t out = (in[i] + w.stride[i] - 1) / w.stride[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.stride[i] + extent - in[i]);
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
    }
  } else if (auto_pad == "VALID") {
    // no padding
  } else if (auto_pad == "NOTSET") {
    explicit_pads(attrs, w);
  } else {
    fail("attribute 'auto_pad' has unknown value '{}'", auto_pad);
  }
  for (int i = 0; i < w.rank; ++i) {
    int64_t extent = (kernel[i] - 1) * w.dilation[i] + 1;
    int64_t span = in[i] + w.pad_begin[i] + w.pad_end[i] - extent;
    if (span < 0) {
      fail(
          "the window ({} with dilation {}) is larger than the padded input ({}) in spatial "
          "dimension {}",
          kernel[i], w.dilation[i], in[i] + w.pad_begin[i] + w.pad_end[i], i);
    }
    w.out[i] = (ceil_mode ? (span + w.stride[i] - 1) / w.stride[i] : span / w.stride[i]) + 1;
    // A last window that would start inside the end padding is dropped (as PyTorch does).
    if (ceil_mode && (w.out[i] - 1) * w.stride[i] >= in[i] + w.pad_begin[i]) --w.out[i];
  }
  return w;
}

Window make_transpose_window(const Attributes &attrs, const std::vector<int64_t> &in,
                             const std::vector<int64_t> &kernel) {
  Window w;
  w.rank = static_cast<int>(in.size());
  w.in = in;
  w.kernel = kernel;
  w.stride = per_dim(attrs, "strides", w.rank, 1);
  w.dilation = per_dim(attrs, "dilations", w.rank, 1);
  w.pad_begin.assign(w.rank, 0);
  w.pad_end.assign(w.rank, 0);
  w.out.assign(w.rank, 0);
  std::vector<int64_t> out_pad = attrs.get_ints("output_padding", std::vector<int64_t>(w.rank, 0));
  if (static_cast<int>(out_pad.size()) != w.rank) {
    fail("attribute 'output_padding' has {} values, expected {}", out_pad.size(), w.rank);
  }
  check_range("output_padding", out_pad, 0);
  std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
  std::vector<int64_t> out_shape = attrs.get_ints("output_shape");
  if (!out_shape.empty() && static_cast<int>(out_shape.size()) > w.rank) {
    out_shape.erase(out_shape.begin(), out_shape.end() - w.rank);
  }
  if (!out_shape.empty() && static_cast<int>(out_shape.size()) != w.rank) {
    fail("attribute 'output_shape' has {} values, expected {} (one per spatial dimension, "
         "optionally after batch and channels)",
         out_shape.size(), w.rank);
  }
  check_range("output_shape", out_shape, 1);
  if (out_shape.empty() && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")) {
    for (int i = 0; i < w.rank; ++i) out_shape.push_back(in[i] * w.stride[i]);
  }
  for (int i = 0; i < w.rank; ++i) {
    int64_t full = w.stride[i] * (in[i] - 1) + out_pad[i] + (kernel[i] - 1) * w.dilation[i] + 1;
    if (!out_shape.empty()) {
      // An output_shape beyond the full output extends it with bias-only positions (as
      // ONNX's tests and ONNX Runtime do).
      int64_t total = std::max<int64_t>(0, full - out_shape[i]);
      if (auto_pad == "SAME_UPPER") {
        w.pad_begin[i] = total / 2;
        w.pad_end[i] = total - total / 2;
      } else {
        w.pad_begin[i] = total - total / 2;
        w.pad_end[i] = total / 2;
      }
    } else if (auto_pad == "NOTSET") {
      std::vector<int64_t> pads = attrs.get_ints("pads", std::vector<int64_t>(2 * w.rank, 0));
      if (static_cast<int>(pads.size()) != 2 * w.rank) {
        fail("attribute 'pads' has {} values, expected {}", pads.size(), 2 * w.rank);
      }
      check_range("pads", pads, INT32_MIN);
      w.pad_begin[i] = pads[i];
      w.pad_end[i] = pads[i + w.rank];
    }
    w.out[i] = out_shape.empty() ? full - w.pad_begin[i] - w.pad_end[i] : out_shape[i];
    if (w.out[i] <= 0) fail("the output would be empty in spatial dimension {}", i);
  }
  return w;
}

}  // namespace vacc::graph
