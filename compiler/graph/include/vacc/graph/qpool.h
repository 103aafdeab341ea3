// The integer arithmetic of vacc.QAveragePool (docs/quantization.md), defined once and shared
// by the graph's reference kernel, the CPU backend and the accelerator's lowering: a window's
// int8 sum times M(n) = round(2^scale_bits / n), n the window's count, rounded and shifted
// right by rshift, clipped:
//   y = clip((sum * M(n) + 2^(rshift-1)) >> rshift, clip_min, clip_max)
// The quantizer's scale_bits keep |sum * M(n)| + 2^(rshift-1) below 2^31 (no int32 wrap) and
// M(n) within the ALU's 16-bit signed immediate.
#pragma once

#include <algorithm>
#include <cstdint>

namespace vacc::graph {

constexpr int kQPoolMaxScaleBits = 23;          // 128 * 2^23 (+ rounding) stays below 2^31
constexpr int64_t kQPoolMaxMultiplier = 32767;  // the ALU's signed 16-bit immediate

// M(n) = round(2^scale_bits / n), ties up; n >= 1.
inline int64_t qpool_multiplier(int64_t count, int scale_bits) {
  return ((int64_t{1} << scale_bits) + count / 2) / count;
}

// The largest scale_bits (at most kQPoolMaxScaleBits) whose multiplier for windows of
// `min_count` positions, the largest one, fits kQPoolMaxMultiplier.
inline int qpool_scale_bits(int64_t min_count) {
  int s = kQPoolMaxScaleBits;
  while (s > 0 && qpool_multiplier(min_count, s) > kQPoolMaxMultiplier) --s;
  return s;
}

// How many of a window's positions o * stride + k - pad_begin (k < kernel) lie in [lo, hi).
inline int64_t qpool_axis_count(int64_t o, int64_t stride, int64_t kernel, int64_t pad_begin,
                                int64_t lo, int64_t hi) {
  const int64_t first = o * stride - pad_begin;
  return std::max<int64_t>(0, std::min(first + kernel, hi) - std::max(first, lo));
}

// One output from its window's sum and multiplier.
inline int8_t qpool_output(int64_t sum, int64_t multiplier, int rshift, int64_t lo, int64_t hi) {
  const int64_t v = (sum * multiplier + (int64_t{1} << (rshift - 1))) >> rshift;
  return static_cast<int8_t>(std::min(std::max(v, lo), hi));
}

}  // namespace vacc::graph
