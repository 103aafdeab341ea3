// Recognition of decomposed operators (passes/recognize_layer_norm.h, recognize_gelu.h): the
// graphs PyTorch exports at opset 13 for nn.LayerNorm and F.gelu (both forms, and Hugging
// Face's gelu_new), built node for node, become one LayerNormalization or vacc.Gelu whose
// reference output equals the decomposed graph's; a decomposition whose intermediate is read
// elsewhere, or that normalizes leading axes, is left alone.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "vacc/graph/passes/recognize_gelu.h"
#include "vacc/graph/passes/recognize_layer_norm.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/graph/shape_inference.h"

using namespace vacc::graph;

namespace {

Tensor random_floats(Shape shape, unsigned seed, float scale = 1) {
  Tensor t(DType::kFloat32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// Builds graphs node by node, inferring each node's output.
struct Builder {
  Graph g;
  int count = 0;
  Value *input(Shape shape) {
    Value *x = g.add_value("x", DType::kFloat32, std::move(shape));
    g.add_input(x);
    return x;
  }
  Value *scalar(float v) {
    return g.add_constant("c" + std::to_string(count++), Tensor::scalar(v));
  }
  Value *op(OpKind kind, std::vector<Value *> in, Attributes at = {}) {
    Value *y = g.add_value("v" + std::to_string(count++), DType::kFloat32, {});
    infer_node(*g.add_node(kind, "n" + std::to_string(count++), std::move(in), {y}, std::move(at)));
    return y;
  }
  Value *mean(Value *x, std::vector<int64_t> axes) {
    Value *a =
        g.add_constant("axes" + std::to_string(count++),
                       Tensor::from_vector<int64_t>({static_cast<int64_t>(axes.size())}, axes));
    return op(OpKind::kReduceMean, {x, a});
  }
  int count_of(OpKind kind) const {
    int n = 0;
    for (const Node *node : g.nodes()) n += node->op == kind;
    return n;
  }
};

// torch.nn.LayerNorm at opset 13: ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul,
// Add. `axes` normalized; `leak` also makes the centered value a graph output.
Value *layer_norm(Builder &b, Value *x, std::vector<int64_t> axes, bool affine, bool leak = false) {
  Value *d = b.op(OpKind::kSub, {x, b.mean(x, axes)});
  if (leak) b.g.add_output(d);
  Value *v = b.mean(b.op(OpKind::kPow, {d, b.scalar(2.0f)}), axes);
  Value *y =
      b.op(OpKind::kDiv, {d, b.op(OpKind::kSqrt, {b.op(OpKind::kAdd, {v, b.scalar(1e-5f)})})});
  if (!affine) return y;
  Shape norm(x->shape.end() - static_cast<long>(axes.size()), x->shape.end());
  Value *w = b.g.add_constant("weight", random_floats(norm, 3));
  Value *bias = b.g.add_constant("bias", random_floats(norm, 4));
  return b.op(OpKind::kAdd, {b.op(OpKind::kMul, {y, w}), bias});
}

void expect_same_outputs(const Graph &before, const Graph &after, const Tensor &x, double tol) {
  const Tensor want = ReferenceExecutor(before).run({x})[0],
               got = ReferenceExecutor(after).run({x})[0];
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got.as_double(i), want.as_double(i), tol) << "element " << i;
}

TEST(RecognizeLayerNorm, TorchLayerNormBecomesOneNode) {
  for (bool affine : {true, false}) {
    Builder before, after;
    before.g.add_output(layer_norm(before, before.input({2, 5, 16}), {-1}, affine));
    after.g.add_output(layer_norm(after, after.input({2, 5, 16}), {-1}, affine));
    EXPECT_EQ(recognize_layer_norm(after.g), 1);
    ASSERT_EQ(after.g.num_nodes(), 1u) << print_graph(after.g);
    const Node &ln = *after.g.nodes()[0];
    EXPECT_EQ(ln.op, OpKind::kLayerNormalization);
    EXPECT_EQ(ln.attrs.get_int("axis"), 2);
    EXPECT_FLOAT_EQ(ln.attrs.get_float("epsilon", 0), 1e-5f);
    EXPECT_EQ(ln.input(2) != nullptr, affine);
    after.g.verify();
    expect_same_outputs(before.g, after.g, random_floats({2, 5, 16}, 1, 3), 1e-5);
  }
}

TEST(RecognizeLayerNorm, SeveralTrailingAxesAndSquareAsMul) {
  Builder b;
  Value *x = b.input({3, 4, 6});
  Value *d = b.op(OpKind::kSub, {x, b.mean(x, {1, 2})});
  Value *v = b.mean(b.op(OpKind::kMul, {d, d}), {2, 1});
  Value *y =
      b.op(OpKind::kDiv, {d, b.op(OpKind::kSqrt, {b.op(OpKind::kAdd, {b.scalar(1e-3f), v})})});
  b.g.add_output(y);
  const Tensor in = random_floats({3, 4, 6}, 2);
  const Tensor want = ReferenceExecutor(b.g).run({in})[0];
  EXPECT_EQ(recognize_layer_norm(b.g), 1);
  EXPECT_EQ(b.count_of(OpKind::kLayerNormalization), 1);
  EXPECT_EQ(b.g.nodes()[0]->attrs.get_int("axis"), 1);
  const Tensor got = ReferenceExecutor(b.g).run({in})[0];
  for (int64_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got.as_double(i), want.as_double(i), 1e-5);
}

TEST(RecognizeLayerNorm, LeavesNonMatchingGraphsAlone) {
  Builder leaked;  // the centered value is also a graph output
  leaked.g.add_output(layer_norm(leaked, leaked.input({2, 8}), {-1}, true, /*leak=*/true));
  EXPECT_EQ(recognize_layer_norm(leaked.g), 0);
  Builder leading;  // normalizes axis 0, not trailing axes
  leading.g.add_output(layer_norm(leading, leading.input({2, 8}), {0}, false));
  EXPECT_EQ(recognize_layer_norm(leading.g), 0);
  EXPECT_EQ(leading.count_of(OpKind::kLayerNormalization), 0);
}

// F.gelu (erf): Div(x, sqrt 2), Erf, Add 1, Mul x, Mul 0.5.
Value *gelu_erf(Builder &b, Value *x) {
  Value *e = b.op(OpKind::kErf, {b.op(OpKind::kDiv, {x, b.scalar(1.4142135f)})});
  return b.op(OpKind::kMul,
              {b.op(OpKind::kMul, {x, b.op(OpKind::kAdd, {e, b.scalar(1)})}), b.scalar(0.5f)});
}

// F.gelu(approximate='tanh'): x*x*x, 0.044715 *, x +, sqrt(2/pi) *, Tanh, 1 +, x *, 0.5 *.
Value *gelu_tanh(Builder &b, Value *x) {
  Value *cube = b.op(OpKind::kMul, {x, b.op(OpKind::kMul, {x, x})});
  Value *u = b.op(OpKind::kAdd, {x, b.op(OpKind::kMul, {b.scalar(0.044715f), cube})});
  Value *t = b.op(OpKind::kTanh, {b.op(OpKind::kMul, {b.scalar(0.7978846f), u})});
  Value *m = b.op(OpKind::kMul, {x, b.op(OpKind::kAdd, {b.scalar(1), t})});
  return b.op(OpKind::kMul, {b.scalar(0.5f), m});
}

// Hugging Face's gelu_new: the half first, Pow(x, 3).
Value *gelu_hf(Builder &b, Value *x) {
  Value *half = b.op(OpKind::kMul, {x, b.scalar(0.5f)});
  Value *cube = b.op(OpKind::kPow, {x, b.scalar(3)});
  Value *u = b.op(OpKind::kAdd, {x, b.op(OpKind::kMul, {cube, b.scalar(0.044715f)})});
  Value *t = b.op(OpKind::kTanh, {b.op(OpKind::kMul, {u, b.scalar(0.7978846f)})});
  return b.op(OpKind::kMul, {half, b.op(OpKind::kAdd, {t, b.scalar(1)})});
}

TEST(RecognizeGelu, EveryExportedFormBecomesOneNode) {
  struct Form {
    Value *(*build)(Builder &, Value *);
    const char *approximate;
  };
  for (const Form &f : {Form{gelu_erf, "none"}, Form{gelu_tanh, "tanh"}, Form{gelu_hf, "tanh"}}) {
    Builder before, after;
    before.g.add_output(f.build(before, before.input({4, 33})));
    after.g.add_output(f.build(after, after.input({4, 33})));
    EXPECT_EQ(recognize_gelu(after.g), 1) << f.approximate;
    ASSERT_EQ(after.g.num_nodes(), 1u) << print_graph(after.g);
    EXPECT_EQ(after.g.nodes()[0]->op, OpKind::kGelu);
    EXPECT_EQ(after.g.nodes()[0]->attrs.get_string("approximate", ""), f.approximate);
    after.g.verify();
    expect_same_outputs(before.g, after.g, random_floats({4, 33}, 5, 4), 1e-6);
  }
}

TEST(RecognizeGelu, LeavesOtherConstantsAndSharedValuesAlone) {
  Builder wrong;  // x / 2 instead of x / sqrt 2
  Value *x = wrong.input({8});
  Value *e = wrong.op(OpKind::kErf, {wrong.op(OpKind::kDiv, {x, wrong.scalar(2)})});
  wrong.g.add_output(wrong.op(
      OpKind::kMul, {wrong.op(OpKind::kMul, {x, wrong.op(OpKind::kAdd, {e, wrong.scalar(1)})}),
                     wrong.scalar(0.5f)}));
  EXPECT_EQ(recognize_gelu(wrong.g), 0);
  Builder shared;  // Erf's output also read by another node
  Value *xs = shared.input({8});
  Value *es = shared.op(OpKind::kErf, {shared.op(OpKind::kDiv, {xs, shared.scalar(1.4142135f)})});
  Value *y = shared.op(
      OpKind::kMul, {shared.op(OpKind::kMul, {xs, shared.op(OpKind::kAdd, {es, shared.scalar(1)})}),
                     shared.scalar(0.5f)});
  shared.g.add_output(shared.op(OpKind::kAdd, {y, es}));
  EXPECT_EQ(recognize_gelu(shared.g), 0);
}

}  // namespace
