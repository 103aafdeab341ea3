// The GPU kernels of graph nodes: a node's attributes, types and shapes mapped onto the GPU
// operators of ops.h. A node the GPU backend has no kernel for gets the reason (its caller runs
// it on the CPU backend).
#include "../../graph/window.h"
#include "common.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::ops::gpu {
namespace {

using graph::Node;
using graph::OpKind;

bool all_float(const Node &node) {
  for (const graph::Value *v : node.inputs) {
    if (v && v->dtype != graph::DType::kFloat32) return false;
  }
  return node.outputs[0] && node.outputs[0]->dtype == graph::DType::kFloat32;
}

// ONNX window attributes on a 2-D input, as a Pool2dShape; "" or the reason it does not fit.
std::string pool_shape(const Node &node, const graph::Shape &x, const std::vector<int64_t> &k,
                       Pool2dShape *p) {
  if (!node.attrs.get_ints("dilations", {}).empty()) {
    for (int64_t d : node.attrs.get_ints("dilations", {}))
      if (d != 1) return "dilations";
  }
  graph::Window w =
      graph::make_window(node.attrs, {x[2], x[3]}, k, node.attrs.get_int("ceil_mode", 0) != 0);
  *p = Pool2dShape{x[0],        x[1],        x[2],           x[3],           k[0], k[1],
                   w.stride[0], w.stride[1], w.pad_begin[0], w.pad_begin[1], 0,    0};
  // Bottom/right padding that gives the window's output count (ceil_mode included); padded
  // cells never count, so extra padding changes nothing else.
  p->pad_bottom = std::max<int64_t>(0, (w.out[0] - 1) * w.stride[0] + k[0] - x[2] - w.pad_begin[0]);
  p->pad_right = std::max<int64_t>(0, (w.out[1] - 1) * w.stride[1] + k[1] - x[3] - w.pad_begin[1]);
  if (p->out_h() != w.out[0] || p->out_w() != w.out[1]) return "this window geometry";
  return "";
}

// b broadcast onto the output's shape as [outer, b_n, inner]; false when b is not of that form.
bool broadcast_form(const graph::Shape &out, const graph::Shape &b, int64_t *outer, int64_t *b_n,
                    int64_t *inner) {
  if (b.size() > out.size()) return false;
  graph::Shape bb(out.size() - b.size(), 1);
  bb.insert(bb.end(), b.begin(), b.end());
  int lo = -1, hi = -1;
  for (size_t d = 0; d < out.size(); ++d) {
    if (bb[d] == 1 && out[d] != 1) continue;
    if (bb[d] != out[d]) return false;
    if (lo < 0) lo = static_cast<int>(d);
    if (hi >= 0 && hi != static_cast<int>(d) - 1) return false;  // not one contiguous range
    hi = static_cast<int>(d);
  }
  *outer = *b_n = *inner = 1;
  for (size_t d = 0; d < out.size(); ++d) {
    if (lo < 0 || static_cast<int>(d) < lo) {
      *outer *= out[d];
    } else if (static_cast<int>(d) <= hi) {
      *b_n *= out[d];
    } else {
      *inner *= out[d];
    }
  }
  return true;
}

std::string build(const Node &node, GpuNodeKernel *k) {
  if (!all_float(node)) return "operands other than float32";
  for (const graph::Value *v : node.inputs)
    if (v && v->layout.blocked) return "blocked (NCHWc) operands";
  const graph::Value &x = *node.inputs.at(0);
  const graph::Shape &out = node.outputs[0]->shape;
  switch (node.op) {
    case OpKind::kConv: {
      const graph::Value &w = *node.inputs.at(1);
      if (node.attrs.has("activation_min") || node.attrs.has("activation_max"))
        return "a fused activation (activation_min/activation_max)";
      if (x.rank() != 4) return "a rank-" + std::to_string(x.rank()) + " input (2-D only)";
      graph::Window win =
          graph::make_window(node.attrs, {x.shape[2], x.shape[3]}, {w.shape[2], w.shape[3]}, false);
      Conv2dShape c{
          x.shape[0],     x.shape[1],       x.shape[2],       x.shape[3],
          w.shape[0],     w.shape[2],       w.shape[3],       win.stride[0],
          win.stride[1],  win.pad_begin[0], win.pad_begin[1], win.pad_end[0],
          win.pad_end[1], win.dilation[0],  win.dilation[1],  node.attrs.get_int("group", 1)};
      if (c.out_h() != out[2] || c.out_w() != out[3]) return "this window geometry";
      k->func = conv2d(c, node.input(2) != nullptr);
      return "";
    }
    case OpKind::kGemm:
    case OpKind::kMatMul: {
      const graph::Value &b = *node.inputs.at(1);
      if (x.rank() != 2 || b.rank() != 2) return "operands that are not matrices";
      bool tb = node.op == OpKind::kGemm && node.attrs.get_int("transB", 0) != 0;
      if (node.op == OpKind::kGemm &&
          (node.attrs.get_int("transA", 0) != 0 || node.attrs.get_float("alpha", 1) != 1.0f ||
           node.attrs.get_float("beta", 1) != 1.0f)) {
        return "transA, alpha or beta";
      }
      const graph::Value *c = node.op == OpKind::kGemm ? node.input(2) : nullptr;
      if (c && !(c->rank() == 1 && c->shape[0] == out[1])) return "a bias that is not [N]";
      k->func = dense(out[0], out[1], x.shape[1], tb, c != nullptr);
      return "";
    }
    case OpKind::kMaxPool:
    case OpKind::kAveragePool: {
      if (x.rank() != 4) return "a rank-" + std::to_string(x.rank()) + " input (2-D only)";
      if (node.outputs.size() > 1 && node.outputs[1]) return "the Indices output";
      std::vector<int64_t> ks = node.attrs.get_ints("kernel_shape", {});
      if (ks.size() != 2) return "a kernel that is not 2-D";
      Pool2dShape p;
      std::string why = pool_shape(node, x.shape, ks, &p);
      if (!why.empty()) return why;
      bool include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
      if (node.op == OpKind::kAveragePool && include_pad &&
          (node.attrs.get_int("ceil_mode", 0) != 0)) {
        return "count_include_pad with ceil_mode";
      }
      k->func = node.op == OpKind::kMaxPool ? max_pool2d(p) : avg_pool2d(p, include_pad);
      return "";
    }
    case OpKind::kGlobalAveragePool:
      if (x.rank() < 3) return "an input of rank below 3";
      k->func = global_avg_pool(x.shape[0], x.shape[1],
                                graph::num_elements(x.shape) / (x.shape[0] * x.shape[1]));
      return "";
    case OpKind::kSoftmax: {
      bool coerce = node.attrs.get_int("coerce_2d", 0) != 0;
      int rank = std::max(1, x.rank());
      int axis = graph::normalize_axis(node.attrs.get_int("axis", -1), rank, "axis", coerce);
      int64_t outer = 1, len = 1, inner = 1;
      for (int i = 0; i < x.rank(); ++i) {
        if (i < axis)
          outer *= x.shape[i];
        else if (i == axis || coerce)
          len *= x.shape[i];
        else
          inner *= x.shape[i];
      }
      k->func = softmax(outer, len, inner);
      return "";
    }
    case OpKind::kRelu:
      k->func = unary(Unary::kRelu, graph::num_elements(out));
      return "";
    case OpKind::kSigmoid:
      k->func = unary(Unary::kSigmoid, graph::num_elements(out));
      return "";
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv: {
      const graph::Value &b = *node.inputs.at(1);
      int64_t outer, b_n, inner;
      if (x.shape != out || !broadcast_form(out, b.shape, &outer, &b_n, &inner)) {
        return "this broadcast (the GPU broadcasts the second operand along leading and "
               "trailing axes)";
      }
      Binary op = node.op == OpKind::kAdd   ? Binary::kAdd
                  : node.op == OpKind::kSub ? Binary::kSub
                  : node.op == OpKind::kMul ? Binary::kMul
                                            : Binary::kDiv;
      k->func = binary(op, outer, b_n, inner);
      return "";
    }
    default:
      return "this operator";
  }
}

}  // namespace

bool build_node_kernel(const graph::Node &node, GpuNodeKernel *out, std::string *why) {
  std::string reason;
  try {
    reason = build(node, out);
  } catch (const Error &e) {
    reason = e.what();
  }
  if (!reason.empty()) {
    if (why)
      *why = fmt::format("{}: the GPU backend does not run {} with {}", node.describe(),
                         graph::op_name(node.op), reason);
    return false;
  }
  return true;
}

}  // namespace vacc::ops::gpu
