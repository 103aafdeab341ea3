// Plain C++ references for the accelerator operators, written directly on the blocked
// layouts of compiler/ops.h, independent of the compiler.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "../test_data.h"
#include "vacc/lower/operators.h"
#include "vacc/isa/config.h"

namespace vacc::test {

inline std::vector<int64_t> random_values(size_t n, int64_t lo, int64_t hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> d(lo, hi);
  std::vector<int64_t> v(n);
  for (auto &x : v) x = d(rng);
  return v;
}

// Random arguments of a convolution or dense layer (data, kernel, bias, ...): int8 values, the
// bias (argument 2) in [-3000, 3000], the output (the last) poisoned.
inline std::vector<std::vector<int64_t>> random_layer_args(const lower::Operator &op,
                                                           uint32_t seed) {
  std::vector<std::vector<int64_t>> args;
  for (size_t i = 0; i < op.args.size(); ++i) {
    const int64_t n = op.args[i]->buffer->elems();
    if (i + 1 == op.args.size())
      args.emplace_back(n, kPoison);
    else if (i == 2)
      args.push_back(random_values(n, -3000, 3000, seed + i));
    else
      args.push_back(random_values(n, -128, 127, seed + i));
  }
  return args;
}

inline int64_t requant(int64_t acc, const lower::Requant &q, int bits) {
  int64_t v = acc >> q.shift;
  int64_t hi = (int64_t{1} << (bits - 1)) - 1;
  v = std::max<int64_t>(v, q.relu ? 0 : -(hi + 1));
  return std::min(v, hi);
}

// The accumulators of conv2d_reference before requantization, in the output's layout.
inline std::vector<int64_t> conv2d_accumulators(const isa::HwConfig &c,
                                                const lower::Conv2dParams &p,
                                                const std::vector<int64_t> &data,
                                                const std::vector<int64_t> &kernel,
                                                const std::vector<int64_t> &bias) {
  int64_t B = c.batch, BI = c.block_in, BO = c.block_out;
  int64_t N = p.batch, C = p.in_channels, O = p.out_channels, H = p.height, W = p.width;
  int64_t KH = p.kernel_h, KW = p.kernel_w, OH = p.out_height(), OW = p.out_width();
  // Grouped: output channel o reduces over its group's C / groups input channels.
  int64_t CB = C / BI, OB = O / BO, CG = C / p.groups, OG = O / p.groups, IBG = CG / BI;
  std::vector<int64_t> out(N * O * OH * OW);
  auto d_at = [&](int64_t n, int64_t ch, int64_t h, int64_t w) {
    return data[((((n / B) * CB + ch / BI) * H + h) * W + w) * B * BI + (n % B) * BI + ch % BI];
  };
  auto k_at = [&](int64_t o, int64_t ch, int64_t kh, int64_t kw) {
    return kernel[((((o / BO) * IBG + ch / BI) * KH + kh) * KW + kw) * BO * BI + (o % BO) * BI +
                  ch % BI];
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t acc = 0;
          for (int64_t cg = 0; cg < CG; ++cg)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t h = oh * p.stride_h + kh - p.pad_h, w = ow * p.stride_w + kw - p.pad_w;
                if (h < 0 || h >= H || w < 0 || w >= W) continue;
                acc += d_at(n, o / OG * CG + cg, h, w) * k_at(o, cg, kh, kw);
              }
          acc += bias[((n / B) * OB + o / BO) * B * BO + (n % B) * BO + o % BO];
          int64_t idx =
              ((((n / B) * OB + o / BO) * OH + oh) * OW + ow) * B * BO + (n % B) * BO + o % BO;
          out[idx] = acc;
        }
  return out;
}

inline std::vector<int64_t> conv2d_reference(const isa::HwConfig &c,
                                             const lower::Conv2dParams &p,
                                             const std::vector<int64_t> &data,
                                             const std::vector<int64_t> &kernel,
                                             const std::vector<int64_t> &bias) {
  std::vector<int64_t> out = conv2d_accumulators(c, p, data, kernel, bias);
  for (int64_t &v : out) v = requant(v, p.requant, c.inp_bits);
  return out;
}

// The accumulators of dense_reference before requantization, in the output's layout.
inline std::vector<int64_t> dense_accumulators(const isa::HwConfig &c,
                                               const lower::DenseParams &p,
                                               const std::vector<int64_t> &data,
                                               const std::vector<int64_t> &weight,
                                               const std::vector<int64_t> &bias) {
  int64_t B = c.batch, BI = c.block_in, BO = c.block_out;
  int64_t CB = p.in_features / BI, OB = p.out_features / BO;
  std::vector<int64_t> out(p.batch * p.out_features);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t o = 0; o < p.out_features; ++o) {
      int64_t acc = 0;
      for (int64_t ch = 0; ch < p.in_features; ++ch) {
        acc += data[((n / B) * CB + ch / BI) * B * BI + (n % B) * BI + ch % BI] *
               weight[((o / BO) * CB + ch / BI) * BO * BI + (o % BO) * BI + ch % BI];
      }
      int64_t at = ((n / B) * OB + o / BO) * B * BO + (n % B) * BO + o % BO;
      acc += bias[(o / BO) * B * BO + (n % B) * BO + o % BO];  // one row block, shared
      out[at] = acc;
    }
  return out;
}

inline std::vector<int64_t> dense_reference(const isa::HwConfig &c, const lower::DenseParams &p,
                                            const std::vector<int64_t> &data,
                                            const std::vector<int64_t> &weight,
                                            const std::vector<int64_t> &bias) {
  std::vector<int64_t> out = dense_accumulators(c, p, data, weight, bias);
  for (int64_t &v : out) v = requant(v, p.requant, c.inp_bits);
  return out;
}

}  // namespace vacc::test
