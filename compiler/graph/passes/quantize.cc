#include "vacc/graph/passes/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "../window.h"
#include "vacc/graph/op_registry.h"
#include "vacc/graph/passes/quantize_qdq.h"
#include "vacc/graph/qpool.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::graph {

int frac_bits_for(float abs_max) {
  if (!(abs_max > 0.0f) || !std::isfinite(abs_max)) return 0;
  int f = static_cast<int>(std::floor(std::log2(127.0 / abs_max)));
  return std::min(30, std::max(-24, f));
}

namespace {

int8_t to_int8(double v) {
  return static_cast<int8_t>(std::min(127.0, std::max(-128.0, std::nearbyint(v))));
}

int32_t to_int32(double v) {
  double lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(std::min(hi, std::max(lo, std::nearbyint(v))));
}

class Quantizer {
 public:
  Quantizer(Graph &graph, const Calibration &calib, const QuantizeOptions &options,
            WeightRounding *rounding)
      : g_(graph), calib_(calib), options_(options), rounding_(rounding) {}

  int run(Int8Forms *forms) {
    for (const std::string &name : options_.keep_float) {
      bool found = false;
      for (const Node *node : g_.nodes()) found |= node->name == name;
      if (!found)
        fail(
            "--keep-float '{}': model '{}' has no layer of that name (`vacc quant-report` lists "
            "them)",
            name, g_.name);
    }
    for (Node *node : g_.nodes()) {
      if (try_quantize(node)) {
        ++quantized_ops_;
      } else {
        for (Value *&in : node->inputs) {
          if (in && q_.count(in)) in = dequantized(in);
        }
      }
    }
    for (size_t i = 0; i < g_.outputs().size(); ++i) {
      Value *out = g_.outputs()[i];
      if (q_.count(out)) g_.set_output(i, dequantized(out));
    }
    std::vector<std::pair<std::string, const Value *>> named;
    for (const auto &[x, q] : q_) named.emplace_back(x->name, q);
    g_.remove_dead_nodes();
    g_.sort_topologically();
    infer_shapes(g_);
    g_.verify();
    if (forms) {
      std::unordered_set<const Value *> live(g_.inputs().begin(), g_.inputs().end());
      for (const Node *n : g_.nodes())
        for (const Value *v : n->outputs) live.insert(v);
      for (const auto &[name, q] : named)
        if (live.count(q)) (*forms)[name] = q;
    }
    return quantized_ops_;
  }

 private:
  Value *make(OpKind op, const std::string &name, std::vector<Value *> inputs, DType dtype,
              Attributes attrs = {}) {
    return add_inferred_node(g_, op, name, std::move(inputs), dtype, std::move(attrs));
  }

  Value *scalar_scale(int frac_bits) {
    return g_.add_constant(g_.unique_name("scale"),
                           Tensor::scalar<float>(std::ldexp(1.0f, -frac_bits)));
  }
  Value *zero_point(int zp = 0) {
    return g_.add_constant(g_.unique_name("zero_point"),
                           Tensor::scalar<int8_t>(static_cast<int8_t>(zp)));
  }

  // The range a value's int8 form must hold: a value read only by a Relu, or by a Clip with
  // constant bounds (ReLU6), is stored after it. The Clip's input and output then share one
  // scale, and fuse turns the dequantize-Clip-quantize chain into the producer's integer clip.
  float range(Value *v) {
    std::vector<Node *> users = g_.consumers(v);
    if (users.size() == 1 && !g_.is_output(v) &&
        (users[0]->op == OpKind::kRelu || constant_clip(*users[0]))) {
      return calib_.range(users[0]->outputs[0]);
    }
    return calib_.range(v);
  }

  static bool constant_clip(const Node &n) {
    if (n.op != OpKind::kClip) return false;
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] && !n.inputs[i]->is_constant()) return false;
    return true;
  }

  Value *quantized(Value *x) {
    auto it = q_.find(x);
    if (it != q_.end()) return it->second;
    int f = frac_bits_for(calib_.range(x));
    Value *q = make(OpKind::kQuantizeLinear, x->name + ".q", {x, scalar_scale(f), zero_point()},
                    DType::kInt8);
    q->frac_bits = f;
    q_[x] = q;
    return q;
  }

  Value *dequantized(Value *x) {
    auto it = dq_.find(x);
    if (it != dq_.end()) return it->second;
    Value *q = q_.at(x);
    Value *d = make(OpKind::kDequantizeLinear, x->name + ".dq",
                    {q, scalar_scale(*q->frac_bits), zero_point(q->zero_point)}, DType::kFloat32);
    dq_[x] = d;
    return d;
  }

  // The largest magnitude of each output channel of weight w (dimension 0 is the channel), or
  // of the whole tensor for every channel without per-channel weights.
  std::vector<float> weight_maxes(const Tensor &w) const {
    int64_t O = w.dim(0), inner = w.size() / O;
    std::vector<float> maxes(O, 0.0f);
    const float *p = w.data<float>();
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < inner; ++i) maxes[o] = std::max(maxes[o], std::abs(p[o * inner + i]));
    if (!options_.per_channel_weights)
      maxes.assign(O, *std::max_element(maxes.begin(), maxes.end()));
    return maxes;
  }

  // Fraction bits of each output channel of weight w.
  std::vector<int> weight_frac_bits(const Tensor &w) const {
    std::vector<int> f;
    for (float m : weight_maxes(w)) f.push_back(frac_bits_for(m));
    return f;
  }

  // With exact weight scales, each channel's gain g in [1, 2): its levels are
  // w * g * 2^fw[o], the largest magnitude at level 127. Empty (power-of-two scales) without
  // the option, or where some channel's scale ratio to y's int8 form (either of the output
  // fraction bits requantize may choose) is beyond what rescale_for and the ALU's immediates
  // take: a layer whose output is far finer or coarser than its products.
  std::vector<double> weight_gains(const Tensor &w, const std::vector<int> &fw, int fx, Value *y) {
    if (!options_.exact_weight_scales) return {};
    const std::vector<float> maxes = weight_maxes(w);
    std::vector<double> gain(maxes.size(), 1.0);
    for (size_t o = 0; o < maxes.size(); ++o) {
      const double g = 127.0 / std::ldexp(double(maxes[o]), fw[o]);
      if (maxes[o] > 0 && g >= 1.0 && g < 2.0) gain[o] = g;
    }
    for (int fo : {frac_bits_for(range(y)), frac_bits_for(range(y) * (127.0f / 255.0f))})
      for (size_t o = 0; o < gain.size(); ++o) {
        const double ratio = std::ldexp(1.0 / gain[o], fo - fx - fw[o]);
        if (!(ratio >= std::ldexp(1.0, -37) && ratio <= std::ldexp(1.0, 14))) return {};
      }
    return gain;
  }

  // w with each output channel's values times its gain (w itself without gains).
  static Tensor scaled_channels(const Tensor &w, const std::vector<double> &gain) {
    Tensor s = w;
    if (gain.empty()) return s;
    const int64_t O = w.dim(0), inner = w.size() / O;
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < inner; ++i)
        s.data<float>()[o * inner + i] =
            static_cast<float>(w.data<float>()[o * inner + i] * gain[o]);
    return s;
  }

  // The int32 accumulator `acc` (scale 2^-(fx+fw[o]), divided by gain[o] where the weights
  // have exact scales) plus the quantized bias and `correction[o]` (accumulator units: an
  // input's zero point), requantized to int8 with fraction bits fo; records it as the int8
  // form of float value y. Where y's sole Relu or ReLU6 feeds only layers that read it
  // unpadded (unsigned_activation), the requantization applies it and stores unsigned levels
  // instead: zero point -128, one bit finer.
  void requantize(Value *acc, Value *y, const std::vector<int> &fw, const std::vector<double> &gain,
                  int fx, const Tensor *bias, int channel_rank,
                  const std::vector<int64_t> &correction = {}) {
    const int64_t O = static_cast<int64_t>(fw.size());
    Shape bshape = {O};
    for (int i = 2; i < channel_rank; ++i) bshape.push_back(1);
    Attributes attrs;
    // Exact weight scales: the ratio of each channel's accumulator scale to the output's as
    // shift, multiplier and post shift (rescale_for, the imported QDQ models' form); the zero
    // point is added after the multiply, the bias holds the rounding rescale_for asks for.
    auto exact_bias = [&](int fo, int zp) {
      std::vector<double> ratios(O);
      for (int64_t o = 0; o < O; ++o) ratios[o] = std::ldexp(1.0 / gain[o], fo - fx - fw[o]);
      const Rescale rs = rescale_for(ratios);
      Tensor bq(DType::kInt32, bshape);
      for (int64_t o = 0; o < O; ++o) {
        const double b = bias ? bias->as_double(o) : 0.0;
        bq.data<int32_t>()[o] =
            to_int32(std::ldexp(b * gain[o], fx + fw[o]) + double(rs.rounding[o]) +
                     (correction.empty() ? 0.0 : double(correction[o])));
      }
      attrs.set("shifts", rs.shifts);
      attrs.set("multipliers", rs.multipliers);
      attrs.set("pre_clip", rs.pre_clip);
      attrs.set("post_shift", rs.post_shift);
      attrs.set("zero_point", int64_t{zp});
      return bq;
    };
    // The bias at output fraction bits fo and zero point zp; nullopt where it leaves int32.
    auto quantized_bias = [&](int fo, int zp,
                              std::vector<int64_t> *shifts) -> std::optional<Tensor> {
      Tensor bq(DType::kInt32, bshape);
      shifts->resize(O);
      for (int64_t o = 0; o < O; ++o) {
        const int64_t s = (*shifts)[o] = fx + fw[o] - fo;
        const double b = bias ? bias->as_double(o) : 0.0;
        const double rounding = s > 0 ? std::ldexp(1.0, static_cast<int>(s - 1)) : 0.0;
        // The zero point added after the shift, added before it (exact: 2^s * zp is an
        // integer for s >= -7).
        const double v = std::ldexp(b, fx + fw[o]) + rounding +
                         (correction.empty() ? 0.0 : double(correction[o])) +
                         std::ldexp(double(zp), static_cast<int>(s));
        if (zp && (s < -7 || std::abs(v) > double(std::numeric_limits<int32_t>::max())))
          return std::nullopt;
        bq.data<int32_t>()[o] = to_int32(v);
      }
      return bq;
    };
    Node *act = unsigned_activation(y);
    std::optional<Tensor> bq;
    int fo = 0, zp = 0;
    if (!gain.empty()) {
      fo = act ? frac_bits_for(range(y) * (127.0f / 255.0f)) : frac_bits_for(range(y));
      zp = act ? -128 : 0;
      bq = exact_bias(fo, zp);
    } else {
      std::vector<int64_t> shifts;
      if (act) {
        fo = frac_bits_for(range(y) * (127.0f / 255.0f));
        zp = -128;
        bq = quantized_bias(fo, zp, &shifts);
      }
      if (!bq) {
        act = nullptr;
        fo = frac_bits_for(range(y));
        zp = 0;
        bq = quantized_bias(fo, zp, &shifts);
      }
      bool uniform =
          std::all_of(shifts.begin(), shifts.end(), [&](int64_t s) { return s == shifts[0]; });
      if (uniform) shifts.resize(1);
      attrs.set("shifts", shifts);
    }
    Value *bias_v = g_.add_constant(g_.unique_name(y->name + ".bias_q"), std::move(*bq));
    Value *sum = make(OpKind::kAdd, y->name + ".acc_bias", {acc, bias_v}, DType::kInt32);
    int64_t clip_min = -128, clip_max = 127;
    if (act && act->op == OpKind::kClip) {  // ReLU6: its bounds as levels (QuantizeLinear's)
      auto level = [&](const Value *bound, int64_t dflt) {
        if (!bound) return dflt;
        const double v = std::nearbyint(std::ldexp(bound->constant->as_double(0), fo)) + zp;
        return static_cast<int64_t>(std::clamp(v, -128.0, 127.0));
      };
      clip_min = level(act->input(1), clip_min);
      clip_max = level(act->input(2), clip_max);
    }
    attrs.set("clip_min", clip_min);
    attrs.set("clip_max", clip_max);
    Value *y8 = make(OpKind::kRequantize, y->name + ".requant", {sum}, DType::kInt8, attrs);
    y8->frac_bits = fo;
    y8->zero_point = zp;
    q_[y] = y8;  // for y's sole reader, the Relu, and as its layer's int8 value (Int8Forms)
    if (act) {
      // The Relu (real 0 is level -128, where the store saturates) or ReLU6 (the clip) is
      // applied: the int8 form is its output's too, and the float Relu is left to die.
      q_[act->outputs[0]] = y8;
      absorbed_.insert(act);
    }
  }

  // The sole Relu or ReLU6 (a Clip with constant bounds, the lower one at least 0) that reads
  // y, when every reader of its output is a convolution without padding or a dense layer
  // (the accelerator pads with 0, which would be a real value under a zero point); null
  // otherwise or with the option off.
  Node *unsigned_activation(Value *y) {
    if (!options_.unsigned_activations || g_.is_output(y)) return nullptr;
    std::vector<Node *> users = g_.consumers(y);
    if (users.size() != 1) return nullptr;
    Node *act = users[0];
    if (act->op == OpKind::kClip) {
      if (!constant_clip(*act) || act->attrs.has("min") || act->attrs.has("max")) return nullptr;
      const Value *lo = act->input(1), *hi = act->input(2);
      if (!lo || lo->constant->size() != 1 || !(lo->constant->as_double(0) >= 0)) return nullptr;
      if (hi &&
          (hi->constant->size() != 1 || hi->constant->as_double(0) < lo->constant->as_double(0)))
        return nullptr;
    } else if (act->op != OpKind::kRelu) {
      return nullptr;
    }
    Value *r = act->outputs[0];
    if (options_.keep_float.count(act->name) || g_.is_output(r)) return nullptr;
    std::vector<Node *> readers = g_.consumers(r);
    if (readers.empty()) return nullptr;
    for (const Node *n : readers)
      if (!reads_unpadded(*n, r)) return nullptr;
    return act;
  }

  // Node n reads r as the data input of a convolution without padding or of a dense layer
  // with constant weights, which quantize_conv / quantize_dense take.
  bool reads_unpadded(const Node &n, const Value *r) const {
    if (options_.keep_float.count(n.name) || n.inputs.empty() || n.inputs[0] != r) return false;
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] == r || (n.inputs[i] && !n.inputs[i]->is_constant())) return false;
    switch (n.op) {
      case OpKind::kConv:
        return !padded(n);
      case OpKind::kGemm:
      case OpKind::kMatMul:
        return n.inputs.size() >= 2 && n.inputs[1]->rank() == 2;
      default:
        return false;
    }
  }

  static bool padded(const Node &conv) {
    const std::string pad = conv.attrs.get_string("auto_pad", "NOTSET");
    if (pad != "NOTSET" && pad != "VALID") return true;
    for (int64_t p : conv.attrs.get_ints("pads", {}))
      if (p != 0) return true;
    return false;
  }

  // -zp * the sum of each output channel's int8 weights (w as [O, ...]): what an input zero
  // point zp takes from the accumulator, added back through the bias.
  static std::vector<int64_t> zero_point_correction(const Tensor &wq, int zp) {
    if (!zp) return {};
    const int64_t O = wq.dim(0), inner = wq.size() / O;
    std::vector<int64_t> c(O, 0);
    for (int64_t o = 0; o < O; ++o) {
      int64_t s = 0;
      for (int64_t i = 0; i < inner; ++i) s += wq.data<int8_t>()[o * inner + i];
      c[o] = -int64_t{zp} * s;
    }
    return c;
  }

  // Node `layer`'s weights w ([O, ...]) on the grids fw: where its inputs' Hessian was
  // collected, learned from it (learn_rounding.h) where it has steps, else rounded with it
  // (round_weights.h); elsewhere to the nearest level.
  Tensor layer_weights(const Node &layer, const Tensor &w, const std::vector<int> &fw) {
    if (rounding_) {
      auto it = rounding_->hessians.find(layer.name);
      if (it == rounding_->hessians.end()) return quantize_weight(w, fw);
      auto steps = rounding_->learn_steps.find(layer.name);
      if (steps == rounding_->learn_steps.end() || steps->second <= 0)
        return round_weights(w, fw, it->second);
      LearnedRounding learned = learn_rounding(w, fw, it->second, steps->second);
      ++rounding_->layers_learned;
      rounding_->channels += learned.channels;
      rounding_->channels_learned += learned.learned;
      rounding_->nearest_error += learned.nearest_error;
      rounding_->error += learned.error;
      return std::move(learned.levels);
    }
    return quantize_weight(w, fw);
  }

  Tensor quantize_weight(const Tensor &w, const std::vector<int> &fw) {
    Tensor q(DType::kInt8, w.shape());
    int64_t O = w.dim(0), inner = w.size() / O;
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        q.data<int8_t>()[o * inner + i] =
            to_int8(std::ldexp(w.data<float>()[o * inner + i], fw[o]));
      }
    return q;
  }

  bool float_input(Value *v) { return v && v->dtype == DType::kFloat32 && !v->is_constant(); }

  bool try_quantize(Node *node) {
    if (absorbed_.count(node)) return true;  // a Relu its producer's requantization applied
    if (options_.keep_float.count(node->name)) return false;
    switch (op_def(node->op).quantize) {
      case QuantRule::kConv:
        return quantize_conv(node);
      case QuantRule::kDense:
        return quantize_dense(node);
      case QuantRule::kAdd:
        return quantize_add(node);
      case QuantRule::kPassThrough:
        return pass_through(node);
      case QuantRule::kAvgPool:
        return quantize_avg_pool(node);
      case QuantRule::kNone:
        return false;
    }
    return false;
  }

  bool quantize_conv(Node *node) {
    Value *x = node->inputs[0], *w = node->inputs[1], *b = node->input(2);
    if (!float_input(x) || !w->is_constant() || (b && !b->is_constant())) return false;
    // An input with a zero point (unsigned levels) is read only unpadded: the accelerator
    // pads with level 0.
    if (has_zero_point(x) && padded(*node)) return false;
    std::vector<int> fw = weight_frac_bits(*w->constant);
    Value *xq = quantized(x);
    const std::vector<double> gain =
        weight_gains(*w->constant, fw, *xq->frac_bits, node->outputs[0]);
    Tensor w8 = layer_weights(*node, scaled_channels(*w->constant, gain), fw);
    const std::vector<int64_t> correction = zero_point_correction(w8, xq->zero_point);
    Value *wq = g_.add_constant(g_.unique_name(w->name + ".q"), std::move(w8));
    Attributes attrs = node->attrs;
    Value *acc =
        make(OpKind::kConvInteger, node->outputs[0]->name + ".acc", {xq, wq}, DType::kInt32, attrs);
    requantize(acc, node->outputs[0], fw, gain, *xq->frac_bits, b ? b->constant.get() : nullptr,
               x->rank(), correction);
    return true;
  }

  // A dense layer: Gemm, or MatMul by constant weights over the rows of an activation of any
  // rank >= 2 (a sequence's tokens: rows = all dimensions but the last), with a following Add
  // of a constant as its bias. A MatMul of two activations is quantize_activation_matmul's.
  bool quantize_dense(Node *node) {
    Value *x = node->inputs[0], *bmat = node->inputs[1];
    if (node->op == OpKind::kMatMul && !bmat->is_constant())
      return quantize_activation_matmul(node);
    if (!float_input(x) || x->rank() < 2 || (node->op == OpKind::kGemm && x->rank() != 2) ||
        !bmat->is_constant() || bmat->rank() != 2) {
      return false;
    }
    Value *c = node->op == OpKind::kGemm ? node->input(2) : nullptr;
    if (node->op == OpKind::kGemm) {
      if (node->attrs.get_int("transA", 0) || node->attrs.get_float("alpha", 1) != 1.0f ||
          node->attrs.get_float("beta", 1) != 1.0f) {
        return false;
      }
      if (c && (!c->is_constant() || c->constant->size() != node->outputs[0]->shape[1])) {
        return false;
      }
    }
    bool trans_b = node->op == OpKind::kGemm && node->attrs.get_int("transB", 0);
    // Weights as [M, K] (one row per output channel).
    const Tensor &bt = *bmat->constant;
    int64_t M = trans_b ? bt.dim(0) : bt.dim(1), K = trans_b ? bt.dim(1) : bt.dim(0);
    Tensor w_mk(DType::kFloat32, {M, K});
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k) {
        w_mk.data<float>()[m * K + k] = bt.data<float>()[trans_b ? m * K + k : k * M + m];
      }
    Value *y = node->outputs[0];
    std::optional<Tensor> bias;
    if (c) bias = c->constant->reshaped({M});
    if (Node *add = node->op == OpKind::kMatMul ? bias_add(y, M) : nullptr) {
      bias = add->inputs[add->inputs[0] == y ? 1 : 0]->constant->reshaped({M});
      y = add->outputs[0];
    }
    Value *xq = as_rows(quantized(x));
    std::vector<int> fw = weight_frac_bits(w_mk);
    const std::vector<double> gain = weight_gains(w_mk, fw, *xq->frac_bits, y);
    Tensor q_mk = layer_weights(*node, scaled_channels(w_mk, gain), fw);
    Tensor q_km(DType::kInt8, {K, M});
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k)
        q_km.data<int8_t>()[k * M + m] = q_mk.data<int8_t>()[m * K + k];
    const std::vector<int64_t> correction = zero_point_correction(q_mk, xq->zero_point);
    Value *wq = g_.add_constant(g_.unique_name(bmat->name + ".q"), std::move(q_km));
    Value *acc = make(OpKind::kMatMulInteger, y->name + ".acc", {xq, wq}, DType::kInt32);
    requantize(acc, y, fw, gain, *xq->frac_bits, bias ? &*bias : nullptr, 2, correction);
    if (y->rank() != 2) {
      q_[y] = reshaped(q_[y], y->shape);
      // A Relu the requantization applied (unsigned levels) has y's shape too.
      for (Node *user : g_.consumers(y))
        if (absorbed_.count(user)) q_[user->outputs[0]] = q_[y];
    }
    return true;
  }

  // The Add of a constant bias ([M], or [1, ..., M]) that alone reads a MatMul's output y.
  Node *bias_add(Value *y, int64_t M) {
    if (g_.is_output(y)) return nullptr;
    std::vector<Node *> users = g_.consumers(y);
    if (users.size() != 1 || users[0]->op != OpKind::kAdd) return nullptr;
    Node *add = users[0];
    const Value *b = add->inputs[add->inputs[0] == y ? 1 : 0];
    if (!b->is_constant() || b->dtype != DType::kFloat32 || b->constant->size() != M ||
        b->shape.empty() || b->shape.back() != M || add->outputs[0]->shape != y->shape)
      return nullptr;
    return add;
  }

  // An int8 value as the [rows, columns] matrix a dense layer reads (rows: every dimension but
  // the last), reusing the 2-D value a reshape made it from (a previous dense layer's output).
  Value *as_rows(Value *xq) {
    if (xq->rank() == 2) return xq;
    const int64_t cols = xq->shape.back(), rows = num_elements(xq->shape) / cols;
    Node *p = xq->producer;
    if (p && p->op == OpKind::kReshape && p->inputs[0]->shape == Shape{rows, cols})
      return p->inputs[0];
    return reshaped(xq, {rows, cols});
  }

  Value *reshaped(Value *xq, const Shape &shape) {
    Value *s = g_.add_constant(
        g_.unique_name(xq->name + ".shape"),
        Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size())}, shape));
    Value *y = make(OpKind::kReshape, xq->name + ".reshaped", {xq, s}, xq->dtype);
    y->frac_bits = xq->frac_bits;
    y->zero_point = xq->zero_point;
    return y;
  }

  // An int8 value transposed by `perm`; a transpose of a transpose becomes one.
  Value *transposed(Value *xq, std::vector<int64_t> perm) {
    Node *p = xq->producer;
    if (p && p->op == OpKind::kTranspose && p->inputs[0]->dtype == xq->dtype) {
      const std::vector<int64_t> inner = p->attrs.get_ints("perm");
      if (inner.size() == perm.size()) {
        for (int64_t &d : perm) d = inner[d];
        xq = p->inputs[0];
      }
    }
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == int64_t(i);
    if (identity) return xq;
    Attributes a;
    a.set("perm", perm);
    Value *y = make(OpKind::kTranspose, xq->name + ".t", {xq}, xq->dtype, a);
    y->frac_bits = xq->frac_bits;
    y->zero_point = xq->zero_point;
    return y;
  }

  // a [..., N, K] x b [..., K, M], both activations with the same leading dimensions (attention's
  // QK^T and scores x V): vacc.QMatMul of a as [G*N, K] and b transposed as [G*M, K], G the
  // leading dimensions' product, one power-of-two scale each; the shift's rounding is its bias.
  bool quantize_activation_matmul(Node *node) {
    Value *a = node->inputs[0], *b = node->inputs[1], *y = node->outputs[0];
    if (!float_input(a) || !float_input(b) || a->rank() < 2 || a->rank() != b->rank()) return false;
    if (has_zero_point(a) || has_zero_point(b)) return false;
    const int r = a->rank();
    if (!std::equal(a->shape.begin(), a->shape.end() - 2, b->shape.begin())) return false;
    const int64_t N = a->shape[r - 2], K = a->shape[r - 1], M = b->shape[r - 1];
    const int64_t G = num_elements(a->shape) / (N * K);
    Value *aq = quantized(a), *bq = quantized(b);
    std::vector<int64_t> perm(r);
    for (int i = 0; i < r; ++i) perm[i] = i;
    std::swap(perm[r - 1], perm[r - 2]);
    Value *a2 = r == 2 ? aq : reshaped(aq, {G * N, K});
    Value *bt = transposed(bq, perm);
    Value *b2 = r == 2 ? bt : reshaped(bt, {G * M, K});
    const int fo = frac_bits_for(range(y));
    const int64_t shift = *aq->frac_bits + *bq->frac_bits - fo;
    Tensor bias(DType::kInt32, {M});
    for (int64_t m = 0; m < M; ++m)
      bias.data<int32_t>()[m] = shift > 0 ? int32_t{1} << std::min<int64_t>(shift - 1, 30) : 0;
    Attributes attrs;
    attrs.set("groups", G);
    attrs.set("shifts", std::vector<int64_t>{shift});
    attrs.set("clip_min", int64_t{-128});
    attrs.set("clip_max", int64_t{127});
    Value *y8 = make(OpKind::kQMatMul, y->name + ".qmatmul",
                     {a2, b2, g_.add_constant(g_.unique_name(y->name + ".round"), bias)},
                     DType::kInt8, attrs);
    y8->frac_bits = fo;
    q_[y] = r == 2 ? y8 : reshaped(y8, y->shape);
    return true;
  }

  // x has an int8 form with a zero point: only convolutions and dense layers read such a form
  // (unsigned_activation); other rules leave the node float, reading it dequantized.
  bool has_zero_point(Value *x) const {
    auto it = q_.find(x);
    return it != q_.end() && it->second->zero_point != 0;
  }

  bool quantize_add(Node *node) {
    Value *a = node->inputs[0], *b = node->inputs[1];
    if (!q_.count(a) || !q_.count(b) || a->shape != b->shape) return false;
    if (has_zero_point(a) || has_zero_point(b)) return false;
    Value *aq = q_[a], *bq = q_[b];
    int fa = *aq->frac_bits, fb = *bq->frac_bits, fc = std::max(fa, fb);
    int fo = frac_bits_for(range(node->outputs[0]));
    Attributes attrs;
    attrs.set("lshift_a", int64_t{fc - fa});
    attrs.set("lshift_b", int64_t{fc - fb});
    attrs.set("rshift", int64_t{fc - fo});
    attrs.set("clip_min", int64_t{-128});
    attrs.set("clip_max", int64_t{127});
    Value *y = make(OpKind::kQAdd, node->outputs[0]->name + ".qadd", {aq, bq}, DType::kInt8, attrs);
    y->frac_bits = fo;
    q_[node->outputs[0]] = y;
    return true;
  }

  // AveragePool / GlobalAveragePool of a quantized 2-D input -> vacc.QAveragePool
  // (graph/qpool.h): the window's sum times M(n) = round(2^scale_bits / n), shifted right by
  // rshift = scale_bits + f_x - f_y. scale_bits is the largest that keeps M within the ALU's
  // immediate for the smallest count n, and rshift at least 1 (the output's fraction bits are
  // lowered where the calibrated range would need more).
  bool quantize_avg_pool(Node *node) {
    Value *x = node->inputs[0];
    if ((!q_.count(x) && !clip_of_quantized(x)) || x->rank() != 4 || has_zero_point(x))
      return false;
    Attributes attrs = node->attrs;
    if (node->op == OpKind::kGlobalAveragePool) {
      attrs = {};
      attrs.set("kernel_shape", std::vector<int64_t>{x->shape[2], x->shape[3]});
    }
    for (int64_t d : attrs.get_ints("dilations", {1, 1}))
      if (d != 1) return false;
    Window w;
    try {
      w = make_window(attrs, {x->shape[2], x->shape[3]}, attrs.get_ints("kernel_shape"),
                      attrs.get_int("ceil_mode", 0) != 0);
    } catch (const Error &) {
      return false;
    }
    // The smallest and largest count of a window (graph/qpool.h, ONNX's divisor).
    const bool include_pad = attrs.get_int("count_include_pad", 0) != 0;
    int64_t n_min = std::numeric_limits<int64_t>::max(), n_max = 0;
    for (int64_t oh = 0; oh < w.out[0]; ++oh)
      for (int64_t ow = 0; ow < w.out[1]; ++ow) {
        auto count = [&](int d, int64_t o) {
          const int64_t lo = include_pad ? -w.pad_begin[d] : 0;
          const int64_t hi = w.in[d] + (include_pad ? w.pad_end[d] : 0);
          return qpool_axis_count(o, w.stride[d], w.kernel[d], w.pad_begin[d], lo, hi);
        };
        const int64_t n = count(0, oh) * count(1, ow);
        if (n > 0) n_min = std::min(n_min, n);
        n_max = std::max(n_max, n);
      }
    if (n_max == 0) return false;
    const int scale_bits = qpool_scale_bits(n_min);
    // Fewer than 10 bits of multiplier for the largest window: too coarse, stays float.
    if (qpool_multiplier(n_max, scale_bits) < 1024) return false;
    Value *xq = quantized(x);
    const int fx = *xq->frac_bits;
    const int fo = std::clamp(frac_bits_for(range(node->outputs[0])), fx + scale_bits - 30,
                              fx + scale_bits - 1);
    attrs.set("scale_bits", int64_t{scale_bits});
    attrs.set("rshift", int64_t{scale_bits + fx - fo});
    attrs.set("clip_min", int64_t{-128});
    attrs.set("clip_max", int64_t{127});
    Value *y =
        make(OpKind::kQAveragePool, node->outputs[0]->name + ".qpool", {xq}, DType::kInt8, attrs);
    y->frac_bits = fo;
    q_[node->outputs[0]] = y;
    return true;
  }

  // A constant Clip (ReLU6) of a dequantized value (run() dequantizes the inputs of what it
  // leaves float): quantized at its own range, which is the scale its input is stored at
  // (range()), so fuse makes it the producer's integer clip.
  static bool clip_of_quantized(const Value *x) {
    const Node *clip = x->producer;
    if (!clip || !constant_clip(*clip)) return false;
    const Node *dq = clip->inputs[0]->producer;
    return dq && dq->op == OpKind::kDequantizeLinear && dq->inputs[0]->frac_bits;
  }

  bool pass_through(Node *node) {
    Value *x = node->inputs[0];
    if (!q_.count(x) || has_zero_point(x)) return false;
    // Only the first output has an int8 form (MaxPool's Indices stay int64).
    for (size_t k = 1; k < node->outputs.size(); ++k) {
      if (node->outputs[k] && !g_.consumers(node->outputs[k]).empty()) return false;
    }
    std::vector<Value *> inputs = node->inputs;
    inputs[0] = q_[x];
    // A Relu commutes with a reshape: on a dense layer's 2-D output (a sequence's rows), it
    // runs before the reshape, where fusion folds it into the layer and the next dense layer
    // reads the same 2-D value.
    Node *p = inputs[0]->producer;
    const bool rows = node->op == OpKind::kRelu && p && p->op == OpKind::kReshape;
    if (rows) inputs[0] = p->inputs[0];
    Value *y = make(node->op, node->outputs[0]->name + ".i8", inputs, DType::kInt8, node->attrs);
    y->frac_bits = q_[x]->frac_bits;
    q_[node->outputs[0]] = rows ? reshaped(y, node->outputs[0]->shape) : y;
    return true;
  }

  Graph &g_;
  const Calibration &calib_;
  QuantizeOptions options_;
  WeightRounding *rounding_;  // --rounding hessian or learned
  std::unordered_map<Value *, Value *> q_;
  std::unordered_map<Value *, Value *> dq_;
  std::unordered_set<const Node *> absorbed_;  // Relus applied by their producer's requantization
  int quantized_ops_ = 0;
};

}  // namespace

int quantize(Graph &graph, const Calibration &calib, const QuantizeOptions &options,
             Int8Forms *forms, WeightRounding *rounding) {
  return Quantizer(graph, calib, options, rounding).run(forms);
}

}  // namespace vacc::graph
