#include "vacc/lower/host_layout.h"

#include "vacc/support/block_groups.h"
#include "vacc/support/blocked_layout.h"
#include "vacc/support/error.h"

namespace vacc::lower {

Conv2dParams blocked_conv(const isa::HwConfig &c, const Conv2dParams &p) {
  Conv2dParams b = p;
  b.batch = round_up(p.batch, c.batch);
  b.in_channels = round_up(p.in_channels, c.block_in);
  b.out_channels = round_up(p.out_channels, c.block_out);
  return b;
}

Conv2dParams folded_conv(const isa::HwConfig &c, const Conv2dParams &p) {
  Conv2dParams f = blocked_conv(c, p);
  f.in_channels = round_up(p.in_channels * p.kernel_h * p.kernel_w, c.block_in);
  f.height = p.out_height();
  f.width = p.out_width();
  f.kernel_h = f.kernel_w = f.stride_h = f.stride_w = 1;
  f.pad_h = f.pad_w = 0;
  return f;
}

bool should_fold(const isa::HwConfig &c, const Conv2dParams &p) {
  return 2 * p.in_channels <= c.block_in && p.kernel_h * p.kernel_w > 1;
}

std::vector<int64_t> pack_data(const isa::HwConfig &c, int64_t n, int64_t ch, int64_t h, int64_t w,
                               const std::vector<int64_t> &data) {
  VACC_CHECK(static_cast<int64_t>(data.size()) == n * ch * h * w) << "data size";
  const int64_t B = c.batch, BI = c.block_in;
  const int64_t NB = round_up(n, B) / B, CB = round_up(ch, BI) / BI;
  std::vector<int64_t> out(NB * CB * h * w * B * BI, 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < ch; ++k)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          out[blocked_offset(i, k, y * w + x, h * w, B, BI, CB)] =
              data[((i * ch + k) * h + y) * w + x];
  return out;
}

std::vector<int64_t> unpack_output(const isa::HwConfig &c, int64_t n, int64_t o, int64_t h,
                                   int64_t w, const std::vector<int64_t> &out) {
  const int64_t B = c.batch, BO = c.block_out;
  const int64_t OB = round_up(o, BO) / BO;
  std::vector<int64_t> plain(n * o * h * w);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < o; ++k)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          plain[((i * o + k) * h + y) * w + x] =
              out[blocked_offset(i, k, y * w + x, h * w, B, BO, OB)];
  return plain;
}

std::vector<int64_t> pack_weight(const isa::HwConfig &c, int64_t o, int64_t ch, int64_t kh,
                                 int64_t kw, const std::vector<int64_t> &weight) {
  VACC_CHECK(static_cast<int64_t>(weight.size()) == o * ch * kh * kw) << "weight size";
  const int64_t BO = c.block_out, BI = c.block_in;
  const int64_t OB = round_up(o, BO) / BO, CB = round_up(ch, BI) / BI;
  std::vector<int64_t> out(OB * CB * kh * kw * BO * BI, 0);
  for (int64_t a = 0; a < o; ++a)
    for (int64_t k = 0; k < ch; ++k)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          out[blocked_offset(a, k, y * kw + x, kh * kw, BO, BI, CB)] =
              weight[((a * ch + k) * kh + y) * kw + x];
  return out;
}

std::vector<int64_t> pack_grouped_weight(const isa::HwConfig &c, int64_t o, int64_t ch,
                                         int64_t groups, int64_t kh, int64_t kw,
                                         const std::vector<int64_t> &weight) {
  VACC_CHECK(static_cast<int64_t>(weight.size()) == o * ch / groups * kh * kw) << "weight size";
  const int64_t parts = block_groups(ch, o, groups, c.block_in, c.block_out);
  const int64_t part_in = round_up(ch, c.block_in) / parts;
  const int64_t part_out = round_up(o, c.block_out) / parts, K = kh * kw, cg = ch / groups;
  std::vector<int64_t> sliced(o * part_in * K, 0);
  for (int64_t a = 0; a < o; ++a)
    for (int64_t j = 0; j < part_in; ++j) {
      const int64_t i = grouped_weight_channel(a, j, ch, o, groups, part_in, part_out);
      if (i >= 0)
        for (int64_t k = 0; k < K; ++k)
          sliced[(a * part_in + j) * K + k] = weight[(a * cg + i) * K + k];
    }
  return pack_weight(c, o, part_in, kh, kw, sliced);
}

std::vector<int64_t> pack_bias(const isa::HwConfig &c, int64_t n, int64_t o,
                               const std::vector<int64_t> &bias) {
  const int64_t B = c.batch, BO = c.block_out;
  const int64_t NB = round_up(n, B) / B, OB = round_up(o, BO) / BO;
  std::vector<int64_t> out(NB * OB * B * BO, 0);
  for (int64_t i = 0; i < NB * B; ++i)
    for (int64_t k = 0; k < o; ++k) out[blocked_offset(i, k, 0, 1, B, BO, OB)] = bias[k];
  return out;
}

std::vector<int64_t> fold_data(const isa::HwConfig &c, const Conv2dParams &p,
                               const std::vector<int64_t> &data) {
  const int64_t OH = p.out_height(), OW = p.out_width(), KH = p.kernel_h, KW = p.kernel_w;
  const int64_t C = p.in_channels, FC = C * KH * KW;
  std::vector<int64_t> cols(p.batch * FC * OH * OW, 0);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t f = (ch * KH + kh) * KW + kw;
          for (int64_t oh = 0; oh < OH; ++oh) {
            const int64_t y = oh * p.stride_h + kh - p.pad_h;
            if (y < 0 || y >= p.height) continue;
            for (int64_t ow = 0; ow < OW; ++ow) {
              const int64_t x = ow * p.stride_w + kw - p.pad_w;
              if (x < 0 || x >= p.width) continue;
              cols[((n * FC + f) * OH + oh) * OW + ow] =
                  data[((n * C + ch) * p.height + y) * p.width + x];
            }
          }
        }
  return pack_data(c, p.batch, FC, OH, OW, cols);
}

std::vector<int64_t> fold_weight(const isa::HwConfig &c, const Conv2dParams &p,
                                 const std::vector<int64_t> &weight) {
  // [O, C, KH, KW] is already [O, C*KH*KW, 1, 1] with channel (c*KH + kh)*KW + kw.
  return pack_weight(c, p.out_channels, p.in_channels * p.kernel_h * p.kernel_w, 1, 1, weight);
}

}  // namespace vacc::lower
