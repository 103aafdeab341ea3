#include "vacc/graph/passes/fuse_pools.h"

#include <algorithm>

#include "../window.h"
#include "vacc/graph/macs.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

namespace vacc::graph {

namespace {

// The accelerator convolution producing `v` for `pool` alone (no other epilogue), or null.
Node *pool_producer(const Graph &g, const Value *v, const Node *pool) {
  Node *conv = v->producer;
  if (!conv || conv->op != OpKind::kQConv || conv->target != Target::kAccel || conv->input(3) ||
      conv->attrs.has("pool_kernel_shape") || g.is_output(v))
    return nullptr;
  if (conv->attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return nullptr;
  const std::vector<Node *> users = g.consumers(v);
  return users.size() == 1 && users[0] == pool ? conv : nullptr;
}

// The windowed pack that feeds `conv` alone (a folded convolution's), or null.
Node *own_windowed_pack(const Graph &g, const Node *conv) {
  Node *pack = conv->inputs[0]->producer;
  if (!pack || pack->op != OpKind::kPackNCHWnc || !pack->attrs.has("kernel_shape") ||
      pack->attrs.has("replicate_pads") || g.consumers(conv->inputs[0]).size() != 1)
    return nullptr;
  return pack;
}

bool fuse_pool(Graph &g, Node *pool, const FusionPolicy &policy) {
  if (pool->outputs.size() > 1 && pool->outputs[1]) return false;  // Indices
  Value *y = pool->inputs[0];
  Node *conv = pool_producer(g, y, pool);
  if (!conv || y->rank() != 4) return false;
  Window w;
  try {
    w = make_window(pool->attrs, {y->shape[2], y->shape[3]}, pool->attrs.get_ints("kernel_shape"),
                    pool->attrs.get_int("ceil_mode", 0) != 0);
  } catch (const Error &) {
    return false;
  }
  if (w.rank != 2 || w.dilation[0] != 1 || w.dilation[1] != 1) return false;
  // The padding the windows read: before the grid, and past it (explicit or ceil_mode's).
  const int64_t top = w.pad_begin[0], left = w.pad_begin[1];
  const int64_t bottom =
      std::max<int64_t>(0, (w.out[0] - 1) * w.stride[0] + w.kernel[0] - top - y->shape[2]);
  const int64_t right =
      std::max<int64_t>(0, (w.out[1] - 1) * w.stride[1] + w.kernel[1] - left - y->shape[3]);
  const bool padded = top || left || bottom || right;
  Node *pack = padded ? own_windowed_pack(g, conv) : nullptr;
  if (padded && !pack) return false;

  const std::optional<uint64_t> apart = policy.cycles_apart({conv, pool});
  // Utilization counts the model's MACs: the convolution's, before its output is pooled.
  if (!conv->model_macs) conv->model_macs = count_macs(*conv);
  const Attributes conv_before = conv->attrs;
  Value *conv_out = conv->outputs[0], *pooled = pool->outputs[0];
  conv->attrs.set("pool_kernel_shape", w.kernel);
  conv->attrs.set("pool_strides", w.stride);
  conv->outputs[0] = pooled;
  if (pack) {
    pack->attrs.set("replicate_pads", std::vector<int64_t>{top, left, bottom, right});
    infer_node(*pack);
  }
  // Not when the backend cannot run it fused, or its parts ran faster apart.
  if (policy.legality(*conv) || policy.prefers_apart(apart, *conv)) {
    conv->attrs = conv_before;
    conv->outputs[0] = conv_out;
    if (pack) {
      pack->attrs.erase("replicate_pads");
      infer_node(*pack);
    }
    return false;
  }
  g.remove_node(pool);
  pooled->producer = conv;
  return true;
}

}  // namespace

int fuse_pools(Graph &graph, const FusionPolicy &policy) {
  if (!policy.legality || policy.keep_apart) return 0;
  int fused = 0;
  for (Node *node : graph.nodes())
    if (node->op == OpKind::kMaxPool && node->target == Target::kAccel)
      fused += fuse_pool(graph, node, policy);
  if (fused) {
    graph.sort_topologically();
    graph.remove_dead_nodes();
    graph.verify();
  }
  return fused;
}

}  // namespace vacc::graph
