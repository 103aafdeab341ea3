// Small float graphs built by hand in the graph tests: random constant tensors, and one node
// per call with its output's shape inferred.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph::test {

// Uniform in [offset - scale, offset + scale), from `seed`.
inline Tensor random_floats(Shape shape, uint32_t seed, float scale = 1.0f, float offset = 0.0f) {
  std::mt19937 rng(seed);
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i)
    t.data<float>()[i] = offset + std::uniform_real_distribution<float>(-scale, scale)(rng);
  return t;
}

// A float node of `kind` named `name` (its output value too).
inline Value *add_op(Graph &g, OpKind kind, const std::string &name, std::vector<Value *> inputs,
                     Attributes attrs = {}) {
  Value *out = g.add_value(name, DType::kFloat32, {});
  Node *node = g.add_node(kind, name, std::move(inputs), {out}, std::move(attrs));
  infer_node(*node);
  return out;
}

// x [1, 4] -> fc1 (weights `w1`, [4, 4]) -> Relu -> fc2 [3], with the Relu's output a graph
// output too: an activation whose values the user sees, which no rescaling pass may touch.
inline Graph dense_pair_with_visible_hidden(Tensor w1) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {1, 4});
  g.add_input(x);
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  Value *h = add_op(
      g, OpKind::kGemm, "fc1",
      {x, g.add_constant("w1", std::move(w1)), g.add_constant("b1", random_floats({4}, 2))}, gemm);
  Value *r = add_op(g, OpKind::kRelu, "relu", {h});
  g.add_output(r);
  g.add_output(add_op(g, OpKind::kGemm, "fc2",
                      {r, g.add_constant("w2", random_floats({3, 4}, 3)),
                       g.add_constant("b2", random_floats({3}, 4))},
                      gemm));
  return g;
}

// The largest difference between a and b relative to b's largest magnitude.
inline double max_rel_diff(const Tensor &a, const Tensor &b) {
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(a.as_double(i) - b.as_double(i)));
    scale = std::max(scale, std::abs(b.as_double(i)));
  }
  return worst / scale;
}

// The SQNR in dB of `got`'s first output against `want`'s over the inputs (each one run).
inline double output_sqnr_db(const Graph &want, const Graph &got,
                             const std::vector<std::vector<Tensor>> &inputs) {
  double err = 0, sig = 0;
  for (const auto &b : inputs) {
    const Tensor w = ReferenceExecutor(want).run(b)[0], g = ReferenceExecutor(got).run(b)[0];
    for (int64_t i = 0; i < w.size(); ++i) {
      err += std::pow(g.as_double(i) - w.as_double(i), 2);
      sig += std::pow(w.as_double(i), 2);
    }
  }
  return 10 * std::log10(sig / err);
}

}  // namespace vacc::graph::test
