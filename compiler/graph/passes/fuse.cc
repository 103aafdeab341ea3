#include "vacc/graph/passes/fuse.h"

#include <cmath>
#include <optional>

#include "pattern.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph {

namespace {

// Follows `node` (whose output is int8 after clipping) with a sole Relu, if any: raises the
// clip's lower bound and bypasses the Relu. Returns true when it did.
bool absorb_relu(Graph &g, Node *node) {
  Node *relu = pattern::sole_consumer(g, node->outputs[0]);
  if (!relu || relu->op != OpKind::kRelu) return false;
  // Real 0 is the output's zero point (0 but for an imported QDQ model's own parameters).
  const int64_t zero = node->attrs.get_int("zero_point", 0);
  node->attrs.set("clip_min", std::max<int64_t>(zero, node->attrs.get_int("clip_min", -128)));
  g.replace_all_uses(relu->outputs[0], node->outputs[0]);
  g.remove_node(relu);
  return true;
}

// The single constant scalar of a quantization parameter or Clip bound, if it is one.
std::optional<double> scalar(const Value *v) {
  if (!v || !v->constant || v->constant->size() != 1) return std::nullopt;
  return v->constant->as_double(0);
}

bool zero_int8_point(const Value *zp) {
  return zp && zp->dtype == DType::kInt8 && scalar(zp) == 0.0;
}

// Follows `node` (int8 output) with a sole DequantizeLinear -> Clip -> QuantizeLinear chain at
// one power-of-two scale (ReLU6 between quantized operators): the chain is the integer clip
// [Q(lo), Q(hi)] (quantizing is monotone, and exact on the dequantized integers), which
// narrows the node's own clip. Returns true when it did.
bool absorb_clip(Graph &g, Node *node) {
  Node *dq = pattern::sole_consumer(g, node->outputs[0]);
  if (!dq || dq->op != OpKind::kDequantizeLinear || dq->inputs[0] != node->outputs[0]) return false;
  Node *clip = pattern::sole_consumer(g, dq->outputs[0]);
  if (!clip || clip->op != OpKind::kClip || clip->inputs[0] != dq->outputs[0]) return false;
  Node *q = pattern::sole_consumer(g, clip->outputs[0]);
  if (!q || q->op != OpKind::kQuantizeLinear || q->outputs[0]->dtype != DType::kInt8) return false;
  const std::optional<double> s = scalar(dq->input(1));
  if (!s || scalar(q->input(1)) != s || *s <= 0 || std::exp2(std::round(std::log2(*s))) != *s)
    return false;
  if (!zero_int8_point(dq->input(2)) || !zero_int8_point(q->input(2))) return false;
  double lo = -INFINITY, hi = INFINITY;
  if (clip->input(1)) {
    if (!scalar(clip->input(1))) return false;
    lo = *scalar(clip->input(1));
  }
  if (clip->input(2)) {
    if (!scalar(clip->input(2))) return false;
    hi = *scalar(clip->input(2));
  }
  if (clip->attrs.has("min") || clip->attrs.has("max") || lo > hi) return false;
  // QuantizeLinear's rounding and saturation.
  auto quantize = [&](double v) {
    return static_cast<int64_t>(std::min(127.0, std::max(-128.0, std::nearbyint(v / *s))));
  };
  node->attrs.set("clip_min", std::max(node->attrs.get_int("clip_min", -128), quantize(lo)));
  node->attrs.set("clip_max", std::min(node->attrs.get_int("clip_max", 127), quantize(hi)));
  g.replace_all_uses(q->outputs[0], node->outputs[0]);
  g.remove_node(q);
  g.remove_node(clip);
  g.remove_node(dq);
  return true;
}

// Matches ConvInteger / MatMulInteger -> Add(constant bias) -> Requantize, without zero
// points, and replaces it by one fused node.
bool fuse_accumulate(Graph &g, Node *mm) {
  bool is_conv = mm->op == OpKind::kConvInteger;
  if (mm->input(2) || mm->input(3)) return false;  // zero points: not from our quantizer
  if (mm->inputs[0]->dtype != DType::kInt8 || mm->inputs[1]->dtype != DType::kInt8 ||
      !mm->inputs[1]->is_constant()) {
    return false;
  }
  if (!is_conv && (mm->inputs[0]->rank() != 2 || mm->inputs[1]->rank() != 2)) return false;
  Node *add = pattern::sole_consumer(g, mm->outputs[0]);
  if (!add || add->op != OpKind::kAdd || add->inputs[0] != mm->outputs[0]) return false;
  Value *bias = add->inputs[1];
  int64_t channels = is_conv ? mm->inputs[1]->shape[0] : mm->inputs[1]->shape[1];
  if (!bias->is_constant() || bias->constant->size() != channels) return false;
  Node *rq = pattern::sole_consumer(g, add->outputs[0]);
  if (!rq || rq->op != OpKind::kRequantize) return false;

  Value *w = mm->inputs[1];
  if (!is_conv) {  // QDense takes weights as [M, K]: one row per output channel
    const Tensor &km = *w->constant;
    int64_t K = km.dim(0), M = km.dim(1);
    Tensor mk(DType::kInt8, {M, K});
    for (int64_t k = 0; k < K; ++k)
      for (int64_t m = 0; m < M; ++m) mk.data<int8_t>()[m * K + k] = km.data<int8_t>()[k * M + m];
    w = g.add_constant(g.unique_name(w->name + ".mk"), std::move(mk));
  }
  Value *b1 =
      g.add_constant(g.unique_name(bias->name + ".1d"), bias->constant->reshaped({channels}));
  Attributes attrs = is_conv ? mm->attrs : Attributes{};
  for (const char *key :
       {"shifts", "multipliers", "pre_clip", "post_shift", "zero_point", "clip_min", "clip_max"}) {
    if (rq->attrs.has(key)) attrs.set(key, rq->attrs.all().at(key));
  }
  Value *x = mm->inputs[0];
  Value *out = rq->outputs[0];
  std::string name = mm->name.empty() ? out->name : mm->name;
  g.remove_node(rq);
  g.remove_node(add);
  g.remove_node(mm);
  Node *fused = g.add_node(is_conv ? OpKind::kQConv : OpKind::kQDense, name, {x, w, b1}, {out},
                           std::move(attrs));
  infer_node(*fused);
  absorb_relu(g, fused);
  absorb_clip(g, fused);
  return true;
}

}  // namespace

int fuse(Graph &graph) {
  int fused = 0;
  for (Node *node : graph.nodes()) {
    if (graph.index_of(node) < 0) continue;  // removed by an earlier match
    switch (node->op) {
      case OpKind::kConvInteger:
      case OpKind::kMatMulInteger:
        fused += fuse_accumulate(graph, node);
        break;
      case OpKind::kQAdd:
      case OpKind::kRequantize: {
        const bool relu = absorb_relu(graph, node);
        fused += relu + absorb_clip(graph, node);
        break;
      }
      default:
        break;
    }
  }
  graph.sort_topologically();
  graph.remove_dead_nodes();
  graph.verify();
  return fused;
}

}  // namespace vacc::graph
