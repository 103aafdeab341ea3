// The blocked layout's packers (vacc/graph/blocked_layout.h).
#include <algorithm>
#include <cstring>

#include "vacc/graph/blocked_layout.h"

#include "vacc/support/block_groups.h"
#include "vacc/support/blocked_layout.h"
#include "vacc/support/error.h"
#include "window.h"

namespace vacc::graph {

Shape blocked_shape(const Shape &plain, int64_t block_n, int64_t block_c) {
  VACC_CHECK(plain.size() >= 2) << "blocked_shape of rank " << plain.size();
  Shape out = {(plain[0] + block_n - 1) / block_n, (plain[1] + block_c - 1) / block_c};
  out.insert(out.end(), plain.begin() + 2, plain.end());
  out.push_back(block_n);
  out.push_back(block_c);
  return out;
}

Shape unblocked_shape(const Shape &blocked) {
  VACC_CHECK(blocked.size() >= 4) << "unblocked_shape of rank " << blocked.size();
  size_t r = blocked.size();
  Shape out = {blocked[0] * blocked[r - 2], blocked[1] * blocked[r - 1]};
  out.insert(out.end(), blocked.begin() + 2, blocked.end() - 2);
  return out;
}

namespace {
// Copies between plain (cropped to `plain` shape) and blocked forms.
void move_blocks(const Shape &plain, const Shape &blocked, int es, const uint8_t *src, uint8_t *dst,
                 bool to_blocked) {
  size_t r = blocked.size();
  int64_t bn = blocked[r - 2], bc = blocked[r - 1], cb = blocked[1];
  int64_t inner = 1;
  for (size_t i = 2; i < plain.size(); ++i) inner *= plain[i];
  for (int64_t n = 0; n < plain[0]; ++n)
    for (int64_t c = 0; c < plain[1]; ++c)
      for (int64_t s = 0; s < inner; ++s) {
        int64_t p = (n * plain[1] + c) * inner + s;
        int64_t b = blocked_offset(n, c, s, inner, bn, bc, cb);
        if (to_blocked)
          std::memcpy(dst + b * es, src + p * es, es);
        else
          std::memcpy(dst + p * es, src + b * es, es);
      }
}
}  // namespace

Tensor block_tensor(const Tensor &plain, int64_t block_n, int64_t block_c) {
  Tensor out(plain.dtype(), blocked_shape(plain.shape(), block_n, block_c));
  move_blocks(plain.shape(), out.shape(), dtype_size(plain.dtype()), plain.raw(), out.raw(), true);
  return out;
}

Tensor unblock_tensor(const Tensor &blocked, const Shape &plain_shape) {
  Tensor out(blocked.dtype(), plain_shape);
  move_blocks(plain_shape, blocked.shape(), dtype_size(blocked.dtype()), blocked.raw(), out.raw(),
              false);
  return out;
}

namespace {
Window unfold_window(const Shape &x, const Attributes &attrs) {
  if (x.size() != 4) fail("a windowed pack takes an [N, C, H, W] input, got {}", shape_str(x));
  return make_window(attrs, {x[2], x[3]}, attrs.get_ints("kernel_shape"), false);
}
}  // namespace

std::vector<int64_t> replicate_pads(const Attributes &attrs) {
  const std::vector<int64_t> r = attrs.get_ints("replicate_pads", {0, 0, 0, 0});
  if (r.size() != 4 || std::any_of(r.begin(), r.end(), [](int64_t v) { return v < 0; }))
    fail("attribute 'replicate_pads' must be 4 non-negative values");
  return r;
}

Shape unfolded_shape(const Shape &x, const Attributes &attrs) {
  if (!attrs.has("kernel_shape")) return x;
  const Window w = unfold_window(x, attrs);
  const std::vector<int64_t> r = replicate_pads(attrs);
  return {x[0], x[1] * w.kernel[0] * w.kernel[1], w.out[0] + r[0] + r[2], w.out[1] + r[1] + r[3]};
}

Tensor unfold_windows(const Tensor &x, const Attributes &attrs) {
  const Window w = unfold_window(x.shape(), attrs);
  Tensor out(x.dtype(), unfolded_shape(x.shape(), attrs));
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t KH = w.kernel[0], KW = w.kernel[1], OH = w.out[0], OW = w.out[1];
  const int64_t EH = out.dim(2), EW = out.dim(3);  // with the replicated edges
  const std::vector<int64_t> r = replicate_pads(attrs);
  const int es = dtype_size(x.dtype());
  std::memset(out.raw(), 0, out.nbytes());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ky = 0; ky < KH; ++ky)
        for (int64_t kx = 0; kx < KW; ++kx) {
          const int64_t f = (c * KH + ky) * KW + kx;
          for (int64_t ey = 0; ey < EH; ++ey) {
            const int64_t oy = std::clamp<int64_t>(ey - r[0], 0, OH - 1);
            const int64_t y = oy * w.stride[0] + ky * w.dilation[0] - w.pad_begin[0];
            if (y < 0 || y >= H) continue;
            for (int64_t ex = 0; ex < EW; ++ex) {
              const int64_t ox = std::clamp<int64_t>(ex - r[1], 0, OW - 1);
              const int64_t xx = ox * w.stride[1] + kx * w.dilation[1] - w.pad_begin[1];
              if (xx < 0 || xx >= W) continue;
              std::memcpy(out.raw() + (((n * C * KH * KW + f) * EH + ey) * EW + ex) * es,
                          x.raw() + (((n * C + c) * H + y) * W + xx) * es, es);
            }
          }
        }
  return out;
}

Tensor slice_weight_groups(const Tensor &w, int64_t group, int64_t block_in, int64_t block_out,
                           int64_t *parts) {
  *parts = 1;
  if (group == 1) return w;
  const int64_t C = w.dim(1) * group, O = w.dim(0), K = w.dim(2) * w.dim(3), cg = w.dim(1);
  *parts = block_groups(C, O, group, block_in, block_out);
  const int64_t part_in = (C + block_in - 1) / block_in / *parts * block_in;
  const int64_t part_out = (O + block_out - 1) / block_out / *parts * block_out;
  Tensor out(w.dtype(), {O, part_in, w.dim(2), w.dim(3)});
  std::memset(out.raw(), 0, out.nbytes());
  const int es = dtype_size(w.dtype());
  for (int64_t o = 0; o < O; ++o)
    for (int64_t j = 0; j < part_in; ++j) {
      const int64_t i = grouped_weight_channel(o, j, C, O, group, part_in, part_out);
      if (i >= 0)
        std::memcpy(out.raw() + (o * part_in + j) * K * es, w.raw() + (o * cg + i) * K * es,
                    K * es);
    }
  return out;
}

}  // namespace vacc::graph
