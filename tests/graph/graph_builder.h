// Small float graphs built by hand in the graph tests: random constant tensors, and one node
// per call with its output's shape inferred.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "vacc/graph/graph.h"
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

}  // namespace vacc::graph::test
