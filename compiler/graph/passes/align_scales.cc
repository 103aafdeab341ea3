#include "vacc/graph/passes/align_scales.h"

#include <cmath>
#include <memory>
#include <unordered_set>

#include "pattern.h"
#include "vacc/graph/passes/quantize.h"

namespace vacc::graph {

namespace {

// A convolution or dense layer whose data input is `x` (input 0, read nowhere else) and whose
// weights are a float constant: dividing the weights by a undoes x's scaling by a.
bool linear_reader(const Node &n, const Value *x) {
  if (n.op != OpKind::kConv && n.op != OpKind::kGemm && n.op != OpKind::kMatMul) return false;
  if (n.inputs.empty() || n.inputs[0] != x || !pattern::float_constant(n.input(1))) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] == x) return false;
  return n.op != OpKind::kGemm || n.attrs.get_int("transA", 0) == 0;
}

bool float_constant_clip(const Node &n) {
  if (n.op != OpKind::kClip) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] && !pattern::float_constant(n.inputs[i])) return false;
  return true;
}

// g(a x) = a g(x) for a > 0, reading x as input 0 only.
bool homogeneous(const Node &n, const Value *x) {
  static const std::unordered_set<OpKind> ops = {OpKind::kRelu,        OpKind::kMaxPool,
                                                 OpKind::kAveragePool, OpKind::kGlobalAveragePool,
                                                 OpKind::kFlatten,     OpKind::kReshape};
  if (!ops.count(n.op) && !float_constant_clip(n)) return false;
  if (n.inputs.empty() || n.inputs[0] != x || n.outputs.size() != 1 || !n.outputs[0]) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] == x) return false;
  return true;
}

// What rescaling the output of one producer touches.
struct ScaledChain {
  std::vector<Value *> values;  // the producer's output and every value derived from it
  std::vector<Node *> clips;    // constant Clips among the derivations: bounds times a
  std::vector<Node *> readers;  // the convolutions and dense layers at its ends: weights / a
};

// The chain from `out`, or false when some value of it reaches anything else (an Add, a
// Concat, a graph output, an operator that is not homogeneous).
bool chain_from(const Graph &g, Value *out, ScaledChain *c) {
  std::vector<Value *> stack = {out};
  while (!stack.empty()) {
    Value *x = stack.back();
    stack.pop_back();
    if (g.is_output(x)) return false;
    c->values.push_back(x);
    std::vector<Node *> users = g.consumers(x);
    if (users.empty()) return false;
    for (Node *u : users) {
      if (linear_reader(*u, x)) {
        c->readers.push_back(u);
      } else if (homogeneous(*u, x)) {
        if (u->op == OpKind::kClip) c->clips.push_back(u);
        stack.push_back(u->outputs[0]);
      } else {
        return false;
      }
    }
  }
  return !c->readers.empty();
}

// The range quantize stores `x` at: a value read only by a Relu or a constant Clip is stored
// after it (quantize.cc's rule), so its own range does not count.
float stored_range(const Graph &g, const Value *x, const Calibration &calib) {
  std::vector<Node *> users = g.consumers(x);
  if (users.size() == 1 && (users[0]->op == OpKind::kRelu || float_constant_clip(*users[0])))
    return 0;
  return calib.range(x);
}

// Input `i` of `n` times `factor`, through a new constant (the old one may be shared).
void scale_input(Graph &g, Node *n, size_t i, double factor) {
  const Value *old = n->inputs[i];
  Tensor t = *old->constant;
  float *d = t.data<float>();
  for (int64_t k = 0; k < t.size(); ++k) d[k] = static_cast<float>(d[k] * factor);
  n->inputs[i] = g.add_constant(g.unique_name(old->name + ".aligned"), std::move(t));
}

void scale_calibration(Calibration &calib, const Value *x, double a) {
  for (auto *m : {&calib.abs_max, &calib.threshold}) {
    auto it = m->find(x);
    if (it != m->end()) it->second = static_cast<float>(it->second * a);
  }
  auto it = calib.channel_mean.find(x);
  if (it != calib.channel_mean.end())
    for (double &v : it->second) v *= a;
}

}  // namespace

int align_scales(Graph &graph, Calibration &calib) {
  int aligned = 0;
  for (Node *p : graph.nodes()) {
    if (p->op != OpKind::kConv && p->op != OpKind::kGemm) continue;
    if (!pattern::float_constant(p->input(1)) ||
        (p->input(2) && !pattern::float_constant(p->input(2))))
      continue;
    if (p->op == OpKind::kGemm && p->attrs.get_int("transA", 0) != 0) continue;
    if (p->outputs.size() != 1 || !p->outputs[0]) continue;
    ScaledChain c;
    if (!chain_from(graph, p->outputs[0], &c)) continue;
    float r = 0;
    for (const Value *x : c.values) r = std::max(r, stored_range(graph, x, calib));
    if (!(r > 0) || !std::isfinite(r)) continue;
    // The grid's top, 127 * 2^-f, a hair below so that rounding keeps f.
    const int f = frac_bits_for(r);
    const double a = std::ldexp(127.0, -f) / r * (1 - 1e-6);
    if (a < 1.001 || frac_bits_for(static_cast<float>(r * a)) != f) continue;
    scale_input(graph, p, 1, a);
    if (p->input(2)) scale_input(graph, p, 2, a);
    for (Node *clip : c.clips) {
      for (size_t i = 1; i < clip->inputs.size(); ++i)
        if (clip->inputs[i]) scale_input(graph, clip, i, a);
      for (const char *bound : {"min", "max"})
        if (clip->attrs.has(bound))
          clip->attrs.set(bound,
                          Attribute(clip->attrs.get_float(bound, 0) * static_cast<float>(a)));
    }
    for (Node *reader : c.readers) scale_input(graph, reader, 1, 1 / a);
    for (const Value *x : c.values) scale_calibration(calib, x, a);
    ++aligned;
  }
  return aligned;
}

}  // namespace vacc::graph
