#include "vacc/graph/passes/fold_windows.h"

#include "vacc/graph/macs.h"
#include "vacc/graph/shape_inference.h"

namespace vacc::graph {

namespace {

// Replaces `conv`'s input by its windowed pack and the convolution by a 1x1 one.
void fold(Graph &g, const isa::HwConfig &config, Node *conv) {
  // Utilization counts the model's MACs: the folded conv's zero taps are not the model's.
  if (!conv->model_macs) conv->model_macs = count_macs(*conv);
  Value *x = conv->inputs[0];
  const Value *w = conv->inputs[1];
  const int64_t o = w->shape[0], k = w->shape[1] * w->shape[2] * w->shape[3];

  Attributes window;
  window.set("block_n", int64_t{config.batch});
  window.set("block_c", int64_t{config.block_in});
  window.set("kernel_shape", std::vector<int64_t>{w->shape[2], w->shape[3]});
  for (const char *key : {"strides", "pads", "dilations", "auto_pad"})
    if (conv->attrs.has(key)) window.set(key, conv->attrs.all().at(key));
  Value *cols = g.add_value(g.unique_name(x->name + ".im2col"), x->dtype, {});
  cols->frac_bits = x->frac_bits;
  cols->zero_point = x->zero_point;
  Node *pack = g.add_node(OpKind::kPackNCHWnc, cols->name, {x}, {cols}, std::move(window));
  infer_node(*pack);

  // [O, C, kh, kw] is [O, C*kh*kw, 1, 1] with channel (c*kh + y)*kw + x, the pack's order.
  conv->inputs[0] = cols;
  conv->inputs[1] =
      g.add_constant(g.unique_name(w->name + ".folded"), w->constant->reshaped({o, k, 1, 1}));
  for (const char *key : {"strides", "pads", "dilations", "auto_pad"}) conv->attrs.erase(key);
  conv->attrs.set("kernel_shape", std::vector<int64_t>{1, 1});
  // Its output is unchanged; pack_layout blocks the weight and infers the packed shapes.
}

}  // namespace

int fold_windows(Graph &graph, const isa::HwConfig &config, const WindowFolding &folds) {
  if (!folds) return 0;
  int folded = 0;
  for (Node *node : graph.nodes()) {
    if (node->op != OpKind::kQConv || node->target != Target::kAccel || !folds(*node)) continue;
    fold(graph, config, node);
    ++folded;
  }
  if (folded) {
    graph.sort_topologically();
    graph.remove_dead_nodes();
    graph.verify();
  }
  return folded;
}

}  // namespace vacc::graph
