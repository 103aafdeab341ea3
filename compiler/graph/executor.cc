#include "vacc/graph/executor.h"

#include <fmt/format.h>

#include <memory>
#include <unordered_map>

#include "kernels/kernels.h"

namespace vacc::graph {

std::vector<Tensor> execute_node(const Node &node, const std::vector<const Tensor *> &in) {
  using namespace kernels;
  switch (node.op) {
    case OpKind::kConv:
      return conv(node, in);
    case OpKind::kConvInteger:
      return conv_integer(node, in);
    case OpKind::kQLinearConv:
      return qlinear_conv(node, in);
    case OpKind::kQConv:
      return qconv(node, in);
    case OpKind::kConvTranspose:
      return conv_transpose(node, in);
    case OpKind::kGemm:
      return gemm(node, in);
    case OpKind::kMatMul:
      return matmul(node, in);
    case OpKind::kMatMulInteger:
      return matmul_integer(node, in);
    case OpKind::kQLinearMatMul:
      return qlinear_matmul(node, in);
    case OpKind::kQDense:
      return qdense(node, in);
    case OpKind::kRelu:
    case OpKind::kLeakyRelu:
    case OpKind::kSigmoid:
    case OpKind::kClip:
    case OpKind::kIdentity:
      return unary(node, in);
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
      return binary(node, in);
    case OpKind::kDropout:
      return dropout(node, in);
    case OpKind::kBatchNormalization:
      return batch_norm(node, in);
    case OpKind::kSoftmax:
      return softmax(node, in);
    case OpKind::kMaxPool:
      return max_pool(node, in);
    case OpKind::kAveragePool:
      return average_pool(node, in);
    case OpKind::kGlobalAveragePool:
      return global_average_pool(node, in);
    case OpKind::kFlatten:
    case OpKind::kReshape:
      return reshape_like(node, in);
    case OpKind::kTranspose:
      return transpose(node, in);
    case OpKind::kConcat:
      return concat(node, in);
    case OpKind::kPad:
      return pad(node, in);
    case OpKind::kConstant: {
      Outputs outs;
      outs.push_back(node.attrs.get_tensor("value"));
      return outs;
    }
    case OpKind::kQuantizeLinear:
      return quantize_linear(node, in);
    case OpKind::kDequantizeLinear:
      return dequantize_linear(node, in);
    case OpKind::kRequantize:
      return requantize(node, in);
    case OpKind::kQAdd:
      return qadd(node, in);
    case OpKind::kPackNCHWnc:
      return pack_nchwnc(node, in);
    case OpKind::kUnpackNCHWnc:
      return unpack_nchwnc(node, in);
  }
  fail("no kernel for {}", op_name(node.op));
}

Executor::Executor(const Graph &graph)
    : Executor(graph, [](size_t, const Node &node, const std::vector<const Tensor *> &in) {
        return execute_node(node, in);
      }) {}

std::vector<Tensor> Executor::run(const std::vector<Tensor> &inputs,
                                  const Observer &observer) const {
  const std::vector<Value *> &graph_inputs = graph_.inputs();
  if (inputs.size() != graph_inputs.size()) {
    fail("graph '{}' takes {} inputs, {} given", graph_.name, graph_inputs.size(), inputs.size());
  }
  std::unordered_map<const Value *, std::shared_ptr<const Tensor>> env;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value *v = graph_inputs[i];
    if (inputs[i].dtype() != v->dtype || inputs[i].shape() != v->shape) {
      fail("input '{}' expects {}{}, got {}{}", v->name, dtype_name(v->dtype), shape_str(v->shape),
           dtype_name(inputs[i].dtype()), shape_str(inputs[i].shape()));
    }
    env[v] = std::make_shared<const Tensor>(inputs[i]);
    if (observer) observer(*v, inputs[i]);
  }
  // Last use of each value, to free intermediates early.
  std::vector<Node *> nodes = graph_.nodes();
  std::unordered_map<const Value *, size_t> last_use;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Value *in : nodes[i]->inputs) {
      if (in) last_use[in] = i;
    }
  }
  auto lookup = [&](const Value *v) -> std::shared_ptr<const Tensor> {
    if (v->is_constant()) return v->constant;
    auto it = env.find(v);
    VACC_CHECK(it != env.end()) << "value '" << v->name << "' used before it is computed";
    return it->second;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node &node = *nodes[i];
    std::vector<std::shared_ptr<const Tensor>> held;
    std::vector<const Tensor *> in;
    for (const Value *v : node.inputs) {
      if (!v) {
        in.push_back(nullptr);
        continue;
      }
      held.push_back(lookup(v));
      in.push_back(held.back().get());
    }
    std::vector<Tensor> outs;
    try {
      outs = runner_(i, node, in);
    } catch (const Error &e) {
      fail("{}: {}", node.describe(static_cast<int>(i)), e.what());
    }
    for (size_t k = 0; k < node.outputs.size() && k < outs.size(); ++k) {
      const Value *v = node.outputs[k];
      if (!v) continue;
      VACC_CHECK(outs[k].shape() == v->shape && outs[k].dtype() == v->dtype)
          << node.describe(static_cast<int>(i)) << " output " << k << " is "
          << dtype_name(outs[k].dtype()) << shape_str(outs[k].shape()) << ", inferred "
          << dtype_name(v->dtype) << shape_str(v->shape);
      if (observer) observer(*v, outs[k]);
      env[v] = std::make_shared<const Tensor>(std::move(outs[k]));
    }
    for (const Value *v : node.inputs) {
      if (v && last_use[v] == i && !graph_.is_output(v)) env.erase(v);
    }
  }
  std::vector<Tensor> results;
  for (const Value *v : graph_.outputs()) results.push_back(*lookup(v));
  return results;
}

}  // namespace vacc::graph
