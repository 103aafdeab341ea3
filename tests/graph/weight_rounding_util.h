// What the weight-rounding tests (round_weights_test, learn_rounding_test) measure a rounding
// by: each output channel's grid as quantize chooses it, and a dense layer's output error on
// its inputs in plain loops.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "vacc/graph/passes/quantize.h"

namespace vacc::graph::test {

// Each channel's fraction bits for weights w [O, ...]: the finest power-of-two grid holding its
// largest magnitude.
inline std::vector<int> channel_grids(const Tensor &w) {
  const int64_t o = w.dim(0), k = w.size() / o;
  std::vector<int> fb(static_cast<size_t>(o), 0);
  for (int64_t r = 0; r < o; ++r) {
    float m = 0;
    for (int64_t i = 0; i < k; ++i) m = std::max(m, std::abs(w.data<float>()[r * k + i]));
    fb[size_t(r)] = frac_bits_for(m);
  }
  return fb;
}

// The squared error of y = x W^T over the rows of xs [n, k] with W's weights [o, k] replaced
// by level(r, i) * 2^-fb[r].
template <typename Level>
double dense_output_error(const Tensor &w, const std::vector<int> &fb, const Tensor &xs,
                          Level level) {
  const int64_t o = w.dim(0), k = w.dim(1), n = xs.dim(0);
  double e = 0;
  for (int64_t s = 0; s < n; ++s)
    for (int64_t r = 0; r < o; ++r) {
      double diff = 0;
      for (int64_t i = 0; i < k; ++i)
        diff += (w.data<float>()[r * k + i] - std::ldexp(level(r, i), -fb[size_t(r)])) *
                xs.data<float>()[s * k + i];
      e += diff * diff;
    }
  return e;
}

// Nearest rounding's level of weight (r, i) on its channel's grid.
inline double nearest_level(const Tensor &w, const std::vector<int> &fb, int64_t r, int64_t i) {
  const int64_t k = w.size() / w.dim(0);
  return std::clamp(std::nearbyint(std::ldexp(double(w.data<float>()[r * k + i]), fb[size_t(r)])),
                    -128.0, 127.0);
}

}  // namespace vacc::graph::test
