#include "vacc/graph/passes/equalize_channels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "pattern.h"
#include "vacc/graph/reference_executor.h"

namespace vacc::graph {

namespace {

// Reads `x` as input 0 and nowhere else.
bool reads_only_as_data(const Node &n, const Value *x) {
  if (n.inputs.empty() || n.inputs[0] != x) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] == x) return false;
  return true;
}

bool scalar_is(const Value *v, float want) {
  return pattern::float_constant(v) && v->constant->size() == 1 &&
         v->constant->data<float>()[0] == want;
}

// Clip(x, 0) with no upper bound: a Relu. A finite bound is the same for every channel, so it
// does not commute with a per-channel factor.
bool relu_clip(const Node &n) {
  if (n.op != OpKind::kClip) return false;
  const bool lo_zero = scalar_is(n.input(1), 0) ||
                       (!n.input(1) && n.attrs.has("min") && n.attrs.get_float("min", 1) == 0);
  const bool no_hi = !n.input(2) && (!n.attrs.has("max") || n.attrs.get_float("max", 0) >=
                                                                std::numeric_limits<float>::max());
  return lo_zero && no_hi;
}

// A value whose channels (dimension 1 of a rank-4 value, or features [c * inner, (c + 1) *
// inner) of a rank-2 value, Flatten's order) can each carry their own factor.
struct Channels {
  Value *value = nullptr;
  int64_t inner = 1;  // rank-2 features per channel
};

// A reader of the chain: weights `weight` (input 1) read channel c of its data input.
struct Reader {
  Node *node = nullptr;
  int64_t inner = 1;
};

struct EqualizedChain {
  Node *producer = nullptr;
  std::vector<Channels> values;  // the producer's output and every value derived from it
  std::vector<Reader> readers;   // the convolutions and dense layers at its ends
};

// `n` computes a channelwise g with g(t x) = t g(x) for t > 0 from `x`; its output's channels
// are x's.
bool channelwise(const Node &n, const Channels &x, Channels *out) {
  if (!reads_only_as_data(n, x.value) || n.outputs.size() != 1 || !n.outputs[0]) return false;
  const int rank = x.value->rank();
  *out = {n.outputs[0], x.inner};
  switch (n.op) {
    case OpKind::kRelu:
      return true;
    case OpKind::kClip:
      return relu_clip(n);
    case OpKind::kMaxPool:
    case OpKind::kAveragePool:
    case OpKind::kGlobalAveragePool:
      return rank == 4;
    case OpKind::kFlatten: {
      if (n.attrs.get_int("axis", 1) != 1 || (rank != 4 && rank != 2)) return false;
      if (rank == 4) out->inner = x.value->shape[2] * x.value->shape[3];
      return out->value->rank() == 2;
    }
    default:
      return false;
  }
}

bool linear_reader(const Node &n, const Channels &x) {
  if (!reads_only_as_data(n, x.value) || !pattern::float_constant(n.input(1))) return false;
  const Value *w = n.input(1);
  if (n.op == OpKind::kConv)
    return x.value->rank() == 4 && x.inner == 1 && w->rank() == 4 && w->shape[1] > 0 &&
           x.value->shape[1] % w->shape[1] == 0;
  if (n.op == OpKind::kGemm)
    return n.attrs.get_int("transA", 0) == 0 && x.value->rank() == 2 && w->rank() == 2;
  return n.op == OpKind::kMatMul && x.value->rank() == 2 && w->rank() == 2;
}

// The chain from producer `p`'s output, or false when some value of it reaches anything else.
bool chain_from(const Graph &g, Node *p, EqualizedChain *c) {
  c->producer = p;
  std::vector<Channels> stack = {{p->outputs[0], 1}};
  while (!stack.empty()) {
    const Channels x = stack.back();
    stack.pop_back();
    if (g.is_output(x.value)) return false;
    c->values.push_back(x);
    const std::vector<Node *> users = g.consumers(x.value);
    if (users.empty()) return false;
    for (Node *u : users) {
      Channels next;
      if (linear_reader(*u, x))
        c->readers.push_back({u, x.inner});
      else if (channelwise(*u, x, &next))
        stack.push_back(next);
      else
        return false;
    }
  }
  return !c->readers.empty();
}

// The producer's output channels: a convolution's weight rows, a dense layer's columns
// (B is [K, N], or [N, K] with transB). 0 when it is neither, or its bias is not per channel.
int64_t producer_channels(const Node &p) {
  if (p.outputs.size() != 1 || !p.outputs[0] || !pattern::float_constant(p.input(1))) return 0;
  const Value *w = p.input(1), *b = p.input(2);
  int64_t n = 0;
  if (p.op == OpKind::kConv && w->rank() == 4 && p.outputs[0]->rank() == 4) {
    n = w->shape[0];
  } else if (p.op == OpKind::kGemm && p.attrs.get_int("transA", 0) == 0 && w->rank() == 2) {
    n = w->shape[p.attrs.get_int("transB", 0) ? 0 : 1];
  } else if (p.op == OpKind::kMatMul && w->rank() == 2 && p.outputs[0]->rank() == 2 &&
             p.input(0)->rank() == 2) {
    n = w->shape[1];
  } else {
    return 0;
  }
  if (b && (!pattern::float_constant(b) || b->constant->size() != n)) return 0;
  return n;
}

// Calls f(index, channel) for each element of `w`, the producer's weights (channel: its output
// channel) or a reader's (channel: the input channel it reads, through `inner`).
template <typename F>
void for_each_channel(const Node &n, const Tensor &w, bool as_reader, int64_t inner,
                      int64_t in_channels, F f) {
  const int64_t size = w.size();
  if (n.op == OpKind::kConv) {
    const int64_t cout = w.dim(0), cin_g = w.dim(1), taps = size / (cout * cin_g);
    const int64_t groups = as_reader ? in_channels / cin_g : 1, per_group = cout / groups;
    for (int64_t k = 0; k < size; ++k) {
      const int64_t o = k / (cin_g * taps), ci = k / taps % cin_g;
      f(k, as_reader ? o / per_group * cin_g + ci : o);
    }
    return;
  }
  // Dense: rows are B's first dimension.
  const bool trans_b = n.op == OpKind::kGemm && n.attrs.get_int("transB", 0);
  const int64_t cols = w.dim(1);
  for (int64_t k = 0; k < size; ++k) {
    const int64_t row = k / cols, col = k % cols;
    // The producer's output channel is B's column (its row with transB); a reader's input
    // feature is B's row (its column with transB).
    const int64_t feature = (as_reader != trans_b) ? row : col;
    f(k, as_reader ? feature / inner : feature);
  }
}

// Input `i` of `n` with each element times factor(channel of it).
void scale_input(Graph &g, Node *n, size_t i, const std::vector<double> &factor, bool as_reader,
                 int64_t inner, int64_t in_channels) {
  const Value *old = n->inputs[i];
  Tensor t = *old->constant;
  float *d = t.data<float>();
  if (i == 2) {  // a bias: one per channel
    for (int64_t k = 0; k < t.size(); ++k) d[k] = static_cast<float>(d[k] * factor[k]);
  } else {
    for_each_channel(*n, t, as_reader, inner, in_channels, [&](int64_t k, int64_t c) {
      d[k] = static_cast<float>(as_reader ? d[k] / factor[c] : d[k] * factor[c]);
    });
  }
  n->inputs[i] = g.add_constant(g.unique_name(old->name + ".equalized"), std::move(t));
}

// The stored values of a chain: a value read only by a Relu or Clip is stored after it.
bool stored(const Graph &g, const Value *v) {
  const std::vector<Node *> users = g.consumers(v);
  return !(users.size() == 1 && (users[0]->op == OpKind::kRelu || users[0]->op == OpKind::kClip));
}

// Channel c's largest magnitude in `t`, folded into `max`.
void channel_abs_max(const Tensor &t, int64_t inner, std::vector<double> &max) {
  const float *d = t.data<float>();
  const int64_t channels = int64_t(max.size());
  if (t.shape().size() == 4) {
    const int64_t n = t.dim(0), hw = t.dim(2) * t.dim(3);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t k = 0; k < hw; ++k)
          max[c] = std::max(max[c], double(std::fabs(d[(b * channels + c) * hw + k])));
  } else {
    const int64_t rows = t.dim(0), features = t.dim(1);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t f = 0; f < features; ++f)
        max[f / inner] = std::max(max[f / inner], double(std::fabs(d[r * features + f])));
  }
}

}  // namespace

int equalize_channels(Graph &graph, const std::vector<std::vector<Tensor>> &batches) {
  std::vector<EqualizedChain> chains;
  for (Node *p : graph.nodes()) {
    if (producer_channels(*p) == 0) continue;
    EqualizedChain c;
    if (chain_from(graph, p, &c)) chains.push_back(std::move(c));
  }
  if (chains.empty() || batches.empty()) return 0;

  // Each stored chain value's channel ranges over the calibration batches (one float run).
  struct Range {
    int64_t inner;
    std::vector<double> max;
  };
  std::unordered_map<const Value *, Range> ranges;
  for (const EqualizedChain &c : chains) {
    const int64_t channels = producer_channels(*c.producer);
    for (const Channels &v : c.values)
      if (stored(graph, v.value)) ranges[v.value] = {v.inner, std::vector<double>(channels, 0.0)};
  }
  ReferenceExecutor executor(graph);
  for (const std::vector<Tensor> &batch : batches)
    executor.run(batch, [&](const Value &v, const Tensor &t) {
      auto it = ranges.find(&v);
      if (it != ranges.end() && t.dtype() == DType::kFloat32)
        channel_abs_max(t, it->second.inner, it->second.max);
    });

  int equalized = 0;
  for (const EqualizedChain &c : chains) {
    const int64_t channels = producer_channels(*c.producer);
    std::vector<double> act(channels, 0.0), wgt(channels, 0.0);
    for (const Channels &v : c.values) {
      auto it = ranges.find(v.value);
      if (it == ranges.end()) continue;
      for (int64_t k = 0; k < channels; ++k) act[k] = std::max(act[k], it->second.max[k]);
    }
    // The readers' weights per channel, each relative to its output row's largest (the row's
    // own scale takes the rest), so that a later chain's factors on those rows do not count.
    for (const Reader &r : c.readers) {
      const Tensor &w = *r.node->input(1)->constant;
      const float *d = w.data<float>();
      const int64_t in_channels = r.node->input(0)->rank() == 4 ? r.node->input(0)->shape[1] : 0;
      // Each weight's output row (its output channel, as for a producer) and the rows' largest.
      std::vector<int64_t> row(w.size());
      std::vector<double> row_max;
      for_each_channel(*r.node, w, false, 1, 0, [&](int64_t k, int64_t o) {
        row[k] = o;
        if (o >= int64_t(row_max.size())) row_max.resize(o + 1, 0.0);
        row_max[o] = std::max(row_max[o], double(std::fabs(d[k])));
      });
      for_each_channel(*r.node, w, true, r.inner, in_channels, [&](int64_t k, int64_t ch) {
        const double top = row_max[row[k]];
        if (top > 0) wgt[ch] = std::max(wgt[ch], std::fabs(d[k]) / top);
      });
    }
    std::vector<double> t(channels, 1.0);
    double top_before = 0, top_after = 0;
    for (int64_t k = 0; k < channels; ++k) {
      if (act[k] > 0 && wgt[k] > 0) t[k] = std::sqrt(wgt[k] / act[k]);
      top_before = std::max(top_before, act[k]);
      top_after = std::max(top_after, act[k] * t[k]);
    }
    if (!(top_before > 0) || !(top_after > 0)) continue;
    bool changed = false;
    for (int64_t k = 0; k < channels; ++k) {
      if (act[k] > 0 && wgt[k] > 0)
        t[k] =
            std::clamp(t[k] * top_before / top_after, 1 / kMaxEqualizeFactor, kMaxEqualizeFactor);
      else
        t[k] = 1;
      changed |= std::fabs(t[k] - 1) > 1e-6;
    }
    if (!changed) continue;
    Node *p = c.producer;
    scale_input(graph, p, 1, t, false, 1, 0);
    if (p->input(2)) scale_input(graph, p, 2, t, false, 1, 0);
    for (const Reader &r : c.readers)
      scale_input(graph, r.node, 1, t, true, r.inner,
                  r.node->input(0)->rank() == 4 ? r.node->input(0)->shape[1] : 0);
    ++equalized;
  }
  return equalized;
}

}  // namespace vacc::graph
