#include "vacc/graph/passes/fold_batch_norm.h"

#include <cmath>

namespace vacc::graph {

int fold_batch_norm(Graph &graph) {
  int folded = 0;
  for (Node *bn : graph.nodes()) {
    if (bn->op != OpKind::kBatchNormalization || bn->attrs.get_int("training_mode", 0)) continue;
    if (bn->outputs.size() > 1 && (bn->outputs[1] || (bn->outputs.size() > 2 && bn->outputs[2]))) {
      continue;
    }
    Value *x = bn->inputs[0];
    Node *conv = x->producer;
    if (!conv || conv->op != OpKind::kConv || graph.consumers(x).size() != 1 ||
        graph.is_output(x)) {
      continue;
    }
    Value *w = conv->inputs[1];
    Value *b = conv->input(2);
    bool params_const = w->is_constant() && (!b || b->is_constant());
    for (int i = 1; i <= 4; ++i) params_const = params_const && bn->inputs[i]->is_constant();
    if (!params_const || w->dtype != DType::kFloat32) continue;

    float eps = bn->attrs.get_float("epsilon", 1e-5f);
    std::vector<float> gamma = bn->inputs[1]->constant->to_float_vector();
    std::vector<float> beta = bn->inputs[2]->constant->to_float_vector();
    std::vector<float> mean = bn->inputs[3]->constant->to_float_vector();
    std::vector<float> var = bn->inputs[4]->constant->to_float_vector();
    int64_t O = w->shape[0], inner = num_elements(w->shape) / O;
    Tensor w_new = *w->constant;
    Tensor b_new(DType::kFloat32, {O});
    float *pw = w_new.data<float>();
    for (int64_t o = 0; o < O; ++o) {
      float a = gamma[o] / std::sqrt(var[o] + eps);
      for (int64_t i = 0; i < inner; ++i) pw[o * inner + i] *= a;
      float bias = b ? b->constant->data<float>()[o] : 0.0f;
      b_new.data<float>()[o] = (bias - mean[o]) * a + beta[o];
    }
    conv->inputs[1] = graph.add_constant(graph.unique_name(w->name + ".bn"), std::move(w_new));
    Value *b_val = graph.add_constant(graph.unique_name(conv->name + ".bias.bn"), std::move(b_new));
    if (conv->inputs.size() < 3) conv->inputs.resize(3, nullptr);
    conv->inputs[2] = b_val;
    graph.replace_all_uses(bn->outputs[0], x);
    graph.remove_node(bn);
    ++folded;
  }
  graph.remove_dead_nodes();
  return folded;
}

}  // namespace vacc::graph
