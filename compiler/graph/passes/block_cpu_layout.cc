#include "vacc/graph/passes/block_cpu_layout.h"

#include <cmath>
#include <unordered_map>

#include "vacc/graph/macs.h"
#include "vacc/graph/op_registry.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph {

namespace {

class Blocker {
 public:
  Blocker(Graph &g, int64_t block) : g_(g), block_(block) {}

  int run() {
    for (Node *node : g_.nodes()) {
      if (!convert(node)) {
        for (Value *&in : node->inputs)
          if (in && plain_.count(in)) in = unpacked(in);
      }
    }
    for (size_t i = 0; i < g_.outputs().size(); ++i) {
      Value *out = g_.outputs()[i];
      if (plain_.count(out)) g_.set_output(i, unpacked(out));
    }
    g_.sort_topologically();
    g_.verify();
    return converted_;
  }

 private:
  bool blocked(const Value *v) const { return v && plain_.count(v); }

  // The node rewritten to compute in the blocked layout, or false (left as it is).
  bool convert(Node *node) {
    const OpDef &def = op_def(node->op);
    if (def.cpu_blocking_applies && !def.cpu_blocking_applies(*node)) return false;
    if (def.cpu_blocking == CpuBlocking::kConv) return convert_conv(node);
    if (def.cpu_blocking == CpuBlocking::kBatchNorm) return convert_batch_norm(node);
    Value *x = node->input(0);
    if (!blocked(x) || node->outputs.empty() || !node->outputs[0]) return false;
    Value *y = node->outputs[0];
    Shape plain_y;
    if (def.cpu_blocking == CpuBlocking::kPool) {
      if (plain_.at(x).size() != 4) return false;
      infer_node(*node);
      plain_y = unblocked_shape(y->shape, plain_.at(x)[1]);
    } else if (def.cpu_blocking == CpuBlocking::kUnary) {
      for (size_t i = 1; i < node->inputs.size(); ++i) {
        const Value *v = node->inputs[i];
        if (v && !(v->is_constant() && v->constant->size() == 1)) return false;
      }
      infer_node(*node);
      plain_y = plain_.at(x);
    } else if (def.cpu_blocking == CpuBlocking::kBinary) {
      const Value *b = node->input(1);
      if (!blocked(b)) return false;
      const Shape &pa = plain_.at(x), &pb = plain_.at(b);
      if (pa == pb && b->shape == x->shape) {
        plain_y = pa;
      } else if (per_channel_of(pb, pa)) {  // a squeeze-excitation's scaling: x * s[N, C, 1, 1]
        plain_y = pa;
      } else if (per_channel_of(pa, pb)) {
        plain_y = pb;
      } else {
        return false;
      }
      infer_node(*node);
    } else if (def.cpu_blocking == CpuBlocking::kConcat) {
      if (!convert_concat(node)) return false;
      infer_node(*node);
      plain_y = plain_.at(x);
      plain_y[1] = 0;
      for (const Value *in : node->inputs) plain_y[1] += plain_.at(in)[1];
    } else {
      return false;
    }
    y->layout = x->layout;
    plain_[y] = plain_y;
    ++converted_;
    return true;
  }

  // Whether a value of plain shape `s` is one per channel of `full` ([N, C, 1...]): blocked,
  // it broadcasts over the other's blocked spatial dimensions element for element.
  static bool per_channel_of(const Shape &s, const Shape &full) {
    if (s.size() != full.size() || s.size() < 3 || s[0] != full[0] || s[1] != full[1]) return false;
    for (size_t d = 2; d < s.size(); ++d)
      if (s[d] != 1) return false;
    return true;
  }

  // The plain shape of a blocked result whose real channel count is `channels`.
  Shape unblocked_shape(const Shape &blocked, int64_t channels) const {
    Shape s = {blocked[0], channels};
    s.insert(s.end(), blocked.begin() + 2, blocked.end() - 2);
    return s;
  }

  bool convert_concat(Node *node) {
    const int rank = static_cast<int>(plain_.at(node->inputs[0]).size());
    if (normalize_axis(node->attrs.get_int("axis", 0), rank, "axis") != 1) return false;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Value *in = node->inputs[i];
      if (!blocked(in) || plain_.at(in).size() != static_cast<size_t>(rank)) return false;
      // Padded channels may only come last.
      if (i + 1 < node->inputs.size() && plain_.at(in)[1] % block_ != 0) return false;
    }
    node->attrs.set("axis", int64_t{1});
    return true;
  }

  bool convert_conv(Node *node) {
    Value *x = node->input(0), *w = node->input(1), *y = node->outputs[0];
    const Shape xs = blocked(x) ? plain_.at(x) : x->shape;
    if (x->dtype != DType::kFloat32 || xs.size() != 4 || !w->is_constant() || w->rank() != 4)
      return false;
    const int64_t group = node->attrs.get_int("group", 1), C = xs[1], M = w->shape[0];
    const bool depthwise = group == C && M == C && w->shape[1] == 1;
    // Other groups when each is whole blocks of inputs and of outputs.
    const bool whole_blocks =
        C % group == 0 && M % group == 0 && C / group % block_ == 0 && M / group % block_ == 0;
    if (group != 1 && !depthwise && !whole_blocks) return false;
    if (!blocked(x) && (depthwise || C >= block_)) x = packed(x);
    if (!node->model_macs) node->model_macs = op_def(node->op).macs(*node);
    node->op = OpKind::kConvNCHWc;
    node->inputs[0] = x;
    node->attrs.set("block_c", block_);
    infer_node(*node);
    plain_[y] = {xs[0], M, y->shape[2], y->shape[3]};
    ++converted_;
    return true;
  }

  // BatchNormalization (inference, constant parameters) on a blocked image, as a depthwise
  // 1x1 convolution: weight scale / sqrt(var + eps), bias B - mean * that weight (the
  // reference's own per-channel affine). It then runs blocked, and the ReLU after it fuses into
  // it, instead of an unpack, two float passes and a pack (DenseNet normalizes each
  // concatenation so).
  bool convert_batch_norm(Node *node) {
    Value *x = node->input(0), *y = node->outputs[0];
    if (!blocked(x) || plain_.at(x).size() != 4 || node->attrs.get_int("training_mode", 0) != 0)
      return false;
    for (size_t i = 1; i < node->outputs.size(); ++i)
      if (node->outputs[i]) return false;
    const int64_t C = plain_.at(x)[1];
    std::vector<std::vector<float>> p;
    for (size_t i = 1; i <= 4; ++i) {
      const Value *v = node->input(i);
      if (!v || !v->is_constant() || v->dtype != DType::kFloat32 || v->constant->size() != C)
        return false;
      p.push_back(v->constant->to_float_vector());
    }
    const float eps = node->attrs.get_float("epsilon", 1e-5f);
    Tensor w(DType::kFloat32, {C, 1, 1, 1}), b(DType::kFloat32, {C});
    for (int64_t c = 0; c < C; ++c) {
      const float a = p[0][c] / std::sqrt(p[3][c] + eps);
      w.data<float>()[c] = a;
      b.data<float>()[c] = p[1][c] - p[2][c] * a;
    }
    // The model's MACs stay the normalization's (none), not the convolution's it runs as.
    if (!node->model_macs) node->model_macs = count_macs(*node);
    Attributes attrs;
    attrs.set("group", C);
    attrs.set("kernel_shape", std::vector<int64_t>{1, 1});
    attrs.set("strides", std::vector<int64_t>{1, 1});
    attrs.set("pads", std::vector<int64_t>{0, 0, 0, 0});
    attrs.set("dilations", std::vector<int64_t>{1, 1});
    attrs.set("block_c", block_);
    node->op = OpKind::kConvNCHWc;
    node->attrs = std::move(attrs);
    node->inputs = {x, g_.add_constant(g_.unique_name(y->name + ".scale"), std::move(w)),
                    g_.add_constant(g_.unique_name(y->name + ".shift"), std::move(b))};
    node->outputs.resize(1);
    infer_node(*node);
    plain_[y] = plain_.at(x);
    ++converted_;
    return true;
  }

  Value *transform(OpKind op, Value *x, Attributes attrs, const std::string &suffix) {
    return add_inferred_node(g_, op, x->name + suffix, {x}, x->dtype, std::move(attrs));
  }

  Value *packed(Value *x) {
    auto it = packed_.find(x);
    if (it != packed_.end()) return it->second;
    Attributes attrs;
    attrs.set("block_n", int64_t{1});
    attrs.set("block_c", block_);
    Value *p = transform(OpKind::kPackNCHWnc, x, std::move(attrs), ".nchwc");
    plain_[p] = x->shape;
    return packed_[x] = p;
  }

  Value *unpacked(Value *x) {
    auto it = unpacked_.find(x);
    if (it != unpacked_.end()) return it->second;
    Attributes attrs;
    attrs.set("block_n", int64_t{1});
    attrs.set("block_c", block_);
    attrs.set("shape", plain_.at(x));
    return unpacked_[x] = transform(OpKind::kUnpackNCHWnc, x, std::move(attrs), ".nchw");
  }

  Graph &g_;
  int64_t block_;
  int converted_ = 0;
  std::unordered_map<const Value *, Shape> plain_;  // the plain shape of each blocked value
  std::unordered_map<Value *, Value *> packed_, unpacked_;
};

}  // namespace

bool blocked_average_pool_supported(const Node &node) {
  if (node.attrs.get_ints("kernel_shape", {}).size() != 2 || node.attrs.get_int("ceil_mode", 0))
    return false;
  for (int64_t d : node.attrs.get_ints("dilations", {1, 1}))
    if (d != 1) return false;
  if (node.attrs.get_int("count_include_pad", 0) != 0) return true;
  const std::string auto_pad = node.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  for (int64_t p : node.attrs.get_ints("pads", {0, 0, 0, 0}))
    if (p != 0) return false;
  return true;
}

int block_cpu_layout(Graph &graph, int64_t block) {
  return Blocker(graph, block).run();
}

}  // namespace vacc::graph
