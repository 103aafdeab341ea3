#include "vacc/graph/passes/quantize_qdq.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_set>

#include "pattern.h"
#include "vacc/graph/op_registry.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::graph {

bool has_qdq(const Graph &graph) {
  for (const Node *n : graph.nodes())
    if (n->op == OpKind::kQuantizeLinear || n->op == OpKind::kDequantizeLinear) return true;
  return false;
}

Rescale rescale_for(const std::vector<double> &ratios) {
  Rescale r;
  std::vector<double> r1(ratios.size());
  double max_r1 = 0, min_r1 = std::numeric_limits<double>::infinity();
  for (size_t c = 0; c < ratios.size(); ++c) {
    const double v = ratios[c];
    if (!(v > 0) || !std::isfinite(v) || v > std::ldexp(1.0, 14))
      fail("scale ratio {} of output channel {} (input scale x weight scale / output scale) is "
           "not in (0, 2^14]",
           v, c);
    int64_t s = 0;
    while (std::ldexp(v, static_cast<int>(s)) < std::ldexp(1.0, -7) && s < 30) ++s;
    r.shifts.push_back(s);
    r1[c] = std::ldexp(v, static_cast<int>(s));
    max_r1 = std::max(max_r1, r1[c]);
    min_r1 = std::min(min_r1, r1[c]);
  }
  if (ratios.empty()) return r;
  int e = 0;
  std::frexp(max_r1, &e);  // max_r1 in [2^(e-1), 2^e)
  r.post_shift = 15 - (e - 1);
  // Beyond 255.75 output steps from the zero point (|zero point| <= 128) the output saturates
  // whatever the rounding: min_r1 >= 2^-7 keeps this within the 16-bit immediate.
  r.pre_clip = static_cast<int64_t>(std::ceil(255.75 / min_r1)) + 1;
  for (size_t c = 0; c < ratios.size(); ++c) {
    const int64_t m = std::llround(std::ldexp(r1[c], static_cast<int>(r.post_shift)));
    r.multipliers.push_back(m);
    // Half a step of the pre-shift (which then rounds rather than floors) and half an output
    // step in accumulator units.
    const int64_t s = r.shifts[c];
    const int64_t half_output =
        m > 0 ? std::llround(std::ldexp(1.0, static_cast<int>(s + r.post_shift) - 1) / double(m))
              : 0;
    r.rounding.push_back((s > 0 ? int64_t{1} << (s - 1) : 0) + half_output);
  }
  return r;
}

namespace {

// A constant input's tensor, or null.
const Tensor *constant_of(const Value *v) {
  return v && v->constant ? v->constant.get() : nullptr;
}

// The node producing v if it is `op`.
Node *produced_by(const Value *v, OpKind op) {
  return v && v->producer && v->producer->op == op ? v->producer : nullptr;
}

// Scale and zero point of a QuantizeLinear / DequantizeLinear with constant parameters: one
// value each, or (weights) one per element of `axis`.
struct QParams {
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
  int64_t axis = 1;
  double scale() const { return scales[0]; }
  int64_t zero_point() const { return zero_points.empty() ? 0 : zero_points[0]; }
  bool per_tensor() const { return scales.size() == 1 && zero_points.size() <= 1; }
  bool same(const QParams &o) const {
    return scales == o.scales && zero_point() == o.zero_point() && per_tensor() && o.per_tensor();
  }
};

std::optional<QParams> qparams(const Node *n) {
  const Tensor *scale = constant_of(n->input(1));
  if (!scale || scale->size() == 0) return std::nullopt;
  QParams p;
  for (int64_t i = 0; i < scale->size(); ++i) p.scales.push_back(scale->as_double(i));
  if (n->input(2)) {
    const Tensor *zp = constant_of(n->input(2));
    if (!zp) return std::nullopt;
    for (int64_t i = 0; i < zp->size(); ++i) p.zero_points.push_back(zp->as_int(i));
  }
  p.axis = n->attrs.get_int("axis", 1);
  return p;
}

class QdqLowering {
 public:
  explicit QdqLowering(Graph &g) : g_(g) {}

  int run() {
    signed_codes();
    for (Node *node : g_.nodes()) {
      if (g_.index_of(node) < 0) continue;  // removed by an earlier rewrite
      const OpDef &def = op_def(node->op);
      if (def.quantize == QuantRule::kConv || def.quantize == QuantRule::kDense)
        integer_ops_ += accumulate(node);
      else if (def.selects_elements)
        integer_ops_ += on_codes(node);
    }
    g_.remove_dead_nodes();
    g_.sort_topologically();
    infer_shapes(g_);
    g_.verify();
    return integer_ops_;
  }

 private:
  Value *int8_constant(const std::string &name, const std::vector<int64_t> &values,
                       const Shape &shape) {
    Tensor t(DType::kInt8, shape);
    for (size_t i = 0; i < values.size(); ++i)
      t.data<int8_t>()[i] = static_cast<int8_t>(values[i]);
    return g_.add_constant(g_.unique_name(name), std::move(t));
  }

  // uint8 codes q become int8 codes q - 128 with zero point z - 128: the same real values, in
  // the accelerator's signed type.
  void signed_codes() {
    std::unordered_set<const Value *> shifted;
    auto shifted_zero_point = [&](Node *n) {
      const Value *zp = n->input(2);
      std::vector<int64_t> z = {0};
      Shape shape;
      if (zp) {
        z = zp->constant->to_int_vector();
        shape = zp->shape;
      }
      for (int64_t &v : z) v -= 128;
      n->inputs.resize(3);
      n->inputs[2] = int8_constant(n->name + ".zero_point_s8", z, shape);
    };
    for (Node *n : g_.nodes()) {
      // A model that returns uint8 codes keeps them.
      if (n->op == OpKind::kQuantizeLinear && n->outputs[0]->dtype == DType::kUInt8 &&
          !g_.is_output(n->outputs[0]) && (!n->input(2) || constant_of(n->input(2)))) {
        shifted_zero_point(n);
        infer_node(*n);
        shifted.insert(n->outputs[0]);
      } else if (n->op == OpKind::kDequantizeLinear && (!n->input(2) || constant_of(n->input(2)))) {
        Value *x = n->inputs[0];
        if (shifted.count(x)) {
          shifted_zero_point(n);
        } else if (x->dtype == DType::kUInt8 && x->constant) {
          std::vector<int64_t> q = x->constant->to_int_vector();
          for (int64_t &v : q) v -= 128;
          n->inputs[0] = int8_constant(x->name + ".s8", q, x->shape);
          shifted_zero_point(n);
        }
      }
    }
  }

  // The int8 activation and its parameters behind input `v`, if it is DequantizeLinear of a
  // computed int8 tensor with one scale and zero point.
  struct Activation {
    Value *codes;
    QParams params;
  };
  std::optional<Activation> activation(Value *v) {
    Node *dq = produced_by(v, OpKind::kDequantizeLinear);
    if (!dq || dq->inputs[0]->dtype != DType::kInt8 || dq->inputs[0]->constant) return std::nullopt;
    std::optional<QParams> p = qparams(dq);
    if (!p || !p->per_tensor()) return std::nullopt;
    return Activation{dq->inputs[0], *p};
  }

  // The QuantizeLinear that alone reads `v` (through a Relu or a constant Clip, which narrow the
  // output's clip bounds), with int8 output and one scale and zero point.
  struct Output {
    Node *quantize;
    QParams params;
    int64_t lo = -128, hi = 127;
  };
  std::optional<Output> output(Value *v) {
    Node *user = pattern::sole_consumer(g_, v);
    std::optional<double> lo, hi;
    if (user && user->op == OpKind::kRelu) {
      lo = 0.0;
      user = pattern::sole_consumer(g_, user->outputs[0]);
    } else if (user && user->op == OpKind::kClip && !user->attrs.has("min") &&
               !user->attrs.has("max")) {
      for (size_t i : {1, 2}) {
        if (!user->input(i)) continue;
        const Tensor *b = constant_of(user->input(i));
        if (!b || b->size() != 1) return std::nullopt;
        (i == 1 ? lo : hi) = b->as_double(0);
      }
      user = pattern::sole_consumer(g_, user->outputs[0]);
    }
    if (!user || user->op != OpKind::kQuantizeLinear || user->outputs[0]->dtype != DType::kInt8)
      return std::nullopt;
    std::optional<QParams> p = qparams(user);
    if (!p || !p->per_tensor()) return std::nullopt;
    Output out{user, *p};
    // QuantizeLinear is monotone and saturating: Q(clip(v, lo, hi)) = clip(Q(v), Q(lo), Q(hi)).
    auto q = [&](double x) {
      return static_cast<int64_t>(std::clamp(std::nearbyint(x / p->scale()) + p->zero_point(),
                                             -128.0, 127.0));
    };
    if (lo) out.lo = q(*lo);
    if (hi) out.hi = q(*hi);
    return out;
  }

  // The int8 weights behind input `v` with one scale per output channel (`channels` of them
  // along `axis`), zero points 0.
  struct Weights {
    const Tensor *codes;
    std::vector<double> scales;
  };
  std::optional<Weights> weights(Value *v, int axis, int64_t channels) {
    Node *dq = produced_by(v, OpKind::kDequantizeLinear);
    if (!dq || !constant_of(dq->inputs[0]) || dq->inputs[0]->dtype != DType::kInt8)
      return std::nullopt;
    std::optional<QParams> p = qparams(dq);
    if (!p) return std::nullopt;
    for (int64_t z : p->zero_points)
      if (z != 0) return std::nullopt;  // asymmetric weights stay in float
    Weights w{dq->inputs[0]->constant.get(), p->scales};
    if (w.scales.size() == 1) {
      w.scales.assign(channels, p->scale());
    } else if (static_cast<int64_t>(w.scales.size()) != channels ||
               normalize_axis(p->axis, v->rank(), "axis") != axis) {
      return std::nullopt;
    }
    return w;
  }

  // A bias as real values per channel: a float constant or DequantizeLinear of a constant.
  std::optional<std::vector<double>> bias_values(Value *b, int64_t channels) {
    if (!b) return std::vector<double>(channels, 0.0);
    std::vector<double> out;
    if (const Tensor *t = constant_of(b); t && b->dtype == DType::kFloat32) {
      for (int64_t i = 0; i < t->size(); ++i) out.push_back(t->as_double(i));
    } else if (Node *dq = produced_by(b, OpKind::kDequantizeLinear)) {
      const Tensor *q = constant_of(dq->inputs[0]);
      std::optional<QParams> p = qparams(dq);
      if (!q || !p) return std::nullopt;
      for (int64_t i = 0; i < q->size(); ++i) {
        const size_t k = p->scales.size() == 1 ? 0 : size_t(i);
        const int64_t z = p->zero_points.empty() ? 0 : p->zero_points[std::min(k, p->zero_points.size() - 1)];
        out.push_back(double(q->as_int(i) - z) * p->scales.at(k));
      }
    } else {
      return std::nullopt;
    }
    if (static_cast<int64_t>(out.size()) != channels) return std::nullopt;
    return out;
  }

  // Conv, Gemm or MatMul in the pattern above, rewritten in integers.
  bool accumulate(Node *node) {
    const bool conv = node->op == OpKind::kConv;
    std::optional<Activation> x = activation(node->inputs[0]);
    if (!x || node->inputs[1]->rank() < 2) return false;
    Value *y = node->outputs[0];
    Value *bias_in = conv || node->op == OpKind::kGemm ? node->input(2) : nullptr;
    Node *bias_add = nullptr;
    int64_t channels = 0;
    int axis = 0;
    bool trans_b = false;
    if (conv) {
      channels = node->inputs[1]->shape[0];
    } else {
      if (x->codes->rank() != 2 || node->inputs[1]->rank() != 2) return false;
      if (node->op == OpKind::kGemm) {
        if (node->attrs.get_int("transA", 0) || node->attrs.get_float("alpha", 1) != 1.0f ||
            node->attrs.get_float("beta", 1) != 1.0f)
          return false;
        trans_b = node->attrs.get_int("transB", 0);
      } else if (Node *add = pattern::sole_consumer(g_, y); add && add->op == OpKind::kAdd) {
        // A MatMul's bias is the Add of a constant after it.
        Value *other = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
        if (constant_of(other) || produced_by(other, OpKind::kDequantizeLinear)) {
          bias_add = add;
          bias_in = other;
        }
      }
      axis = trans_b ? 0 : 1;
      channels = node->inputs[1]->shape[axis];
    }
    std::optional<Weights> w = weights(node->inputs[1], axis, channels);
    if (!w) return false;
    std::optional<std::vector<double>> bias = bias_values(bias_in, channels);
    if (!bias) return false;
    std::optional<Output> out = output(bias_add ? bias_add->outputs[0] : y);
    if (!out) return false;
    const int64_t zx = x->params.zero_point();
    Attributes attrs = conv ? node->attrs : Attributes{};
    Value *codes = x->codes;
    if (conv && zx != 0) {
      // The accelerator pads with 0, the model with its zero point: pad explicitly.
      if (attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return false;
      std::vector<int64_t> pads = attrs.get_ints("pads", {});
      if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) {
        const size_t spatial = pads.size() / 2;
        std::vector<int64_t> all(2 * (spatial + 2), 0);
        for (size_t i = 0; i < spatial; ++i) {
          all[2 + i] = pads[i];
          all[spatial + 4 + i] = pads[spatial + i];
        }
        Value *pads_v = g_.add_constant(
            g_.unique_name(codes->name + ".pads"),
            Tensor::from_vector<int64_t>({static_cast<int64_t>(all.size())}, all));
        Value *value = int8_constant(codes->name + ".pad_value", {zx}, {});
        codes = make(OpKind::kPad, codes->name + ".padded", {codes, pads_v, value}, DType::kInt8);
        attrs.erase("pads");
      }
    }

    // Integer weights as ConvInteger / MatMulInteger read them, and their per-channel sums.
    const Tensor &wq = *w->codes;
    const int64_t inner = wq.size() / channels;
    std::vector<int64_t> sums(channels, 0);
    Value *wv = nullptr;
    if (conv) {
      for (int64_t i = 0; i < wq.size(); ++i) sums[i / inner] += wq.as_int(i);
      wv = node->inputs[1]->producer->inputs[0];
    } else {
      const int64_t K = inner;
      Tensor km(DType::kInt8, {K, channels});
      for (int64_t m = 0; m < channels; ++m)
        for (int64_t k = 0; k < K; ++k) {
          const int8_t v = wq.data<int8_t>()[trans_b ? m * K + k : k * channels + m];
          km.data<int8_t>()[k * channels + m] = v;
          sums[m] += v;
        }
      wv = g_.add_constant(g_.unique_name(node->inputs[1]->name + ".km"), std::move(km));
    }

    std::vector<double> ratios(channels);
    const double sx = x->params.scale(), sy = out->params.scale();
    for (int64_t c = 0; c < channels; ++c) ratios[c] = sx * w->scales[c] / sy;
    Rescale rs;
    try {
      rs = rescale_for(ratios);
    } catch (const Error &e) {
      fail("{}: {}", node->describe(), e.what());
    }
    Shape bshape = {channels};
    if (conv)
      for (int i = 2; i < y->rank(); ++i) bshape.push_back(1);
    Tensor bq(DType::kInt32, bshape);
    for (int64_t c = 0; c < channels; ++c) {
      const double acc = std::nearbyint((*bias)[c] / (sx * w->scales[c])) - double(zx) * sums[c] +
                         double(rs.rounding[c]);
      bq.data<int32_t>()[c] = static_cast<int32_t>(std::clamp(
          acc, double(std::numeric_limits<int32_t>::min()), double(std::numeric_limits<int32_t>::max())));
    }

    const std::string &name = out->quantize->outputs[0]->name;
    Value *acc = make(conv ? OpKind::kConvInteger : OpKind::kMatMulInteger, name + ".acc",
                      {codes, wv}, DType::kInt32, attrs);
    Value *bias_v = g_.add_constant(g_.unique_name(name + ".bias_q"), std::move(bq));
    Value *sum = make(OpKind::kAdd, name + ".acc_bias", {acc, bias_v}, DType::kInt32);
    Attributes ra;
    ra.set("shifts", rs.shifts);
    ra.set("multipliers", rs.multipliers);
    ra.set("pre_clip", rs.pre_clip);
    ra.set("post_shift", rs.post_shift);
    ra.set("zero_point", out->params.zero_point());
    ra.set("clip_min", out->lo);
    ra.set("clip_max", out->hi);
    Value *codes_out = make(OpKind::kRequantize, name + ".requant", {sum}, DType::kInt8, ra);
    g_.replace_all_uses(out->quantize->outputs[0], codes_out);
    g_.remove_node(out->quantize);
    return true;
  }

  // DequantizeLinear -> op -> QuantizeLinear with the same parameters: the op on the codes.
  bool on_codes(Node *node) {
    std::optional<Activation> x = activation(node->inputs[0]);
    if (!x) return false;
    for (size_t k = 1; k < node->outputs.size(); ++k)
      if (node->outputs[k] && !g_.consumers(node->outputs[k]).empty()) return false;
    Node *q = pattern::sole_consumer(g_, node->outputs[0]);
    if (!q || q->op != OpKind::kQuantizeLinear || q->outputs[0]->dtype != DType::kInt8) return false;
    std::optional<QParams> p = qparams(q);
    if (!p || !p->same(x->params)) return false;
    std::vector<Value *> inputs = node->inputs;
    inputs[0] = x->codes;
    Value *codes = make(node->op, q->outputs[0]->name + ".codes", inputs, DType::kInt8, node->attrs);
    g_.replace_all_uses(q->outputs[0], codes);
    g_.remove_node(q);
    return true;
  }

  Value *make(OpKind op, const std::string &name, std::vector<Value *> inputs, DType dtype,
              Attributes attrs = {}) {
    return add_inferred_node(g_, op, name, std::move(inputs), dtype, std::move(attrs));
  }

  Graph &g_;
  int integer_ops_ = 0;
};

}  // namespace

int quantize_qdq(Graph &graph) {
  return QdqLowering(graph).run();
}

}  // namespace vacc::graph
