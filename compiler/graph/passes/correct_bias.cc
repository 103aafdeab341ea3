#include "vacc/graph/passes/correct_bias.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <unordered_set>

#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/support/error.h"

namespace vacc::graph {

namespace {

// A layer to correct: the Add of its int32 bias (input 1, a constant) to its accumulator, read
// only by the Requantize whose output is the int8 form of float value `name`.
struct BiasedLayer {
  Node *add = nullptr;
  const Node *requant = nullptr;
  const std::vector<double> *float_mean = nullptr;
};

std::unordered_map<const Node *, BiasedLayer> layers(const Graph &g, const Int8Forms &forms,
                                                     const ChannelMeans &means) {
  std::unordered_map<const Node *, BiasedLayer> out;
  for (const auto &[name, y8] : forms) {
    const Node *r = y8->producer;
    if (!r || r->op != OpKind::kRequantize || !y8->frac_bits) continue;
    // Exact weight scales (a multiplier in the requantization): the bias's exponent is not a
    // power of two; such layers keep their bias.
    if (r->attrs.has("multipliers")) continue;
    // A requantization that applies a Relu (unsigned levels) is the int8 form of the Relu's
    // output too: its sums are matched against the value it is named after, the Relu's input.
    if (r->name != name + ".requant") continue;
    Node *add = r->inputs[0]->producer;
    if (!add || add->op != OpKind::kAdd || g.consumers(add->outputs[0]).size() != 1) continue;
    const Value *acc = add->inputs[0], *bias = add->inputs[1];
    if (!acc->producer || !bias->is_constant() || bias->dtype != DType::kInt32) continue;
    const OpKind k = acc->producer->op;
    if (!((k == OpKind::kConvInteger && acc->rank() == 4) ||
          (k == OpKind::kMatMulInteger && acc->rank() == 2)))
      continue;
    auto m = means.find(name);
    if (m == means.end() || int64_t(m->second.size()) != bias->constant->size() ||
        y8->shape != acc->shape)
      continue;
    out[add] = {add, r, &m->second};
  }
  return out;
}

// Per channel (dimension 1) mean of int32 tensors, each value less `offset[c]`, times
// 2^-exponent[c].
std::vector<double> real_means(const std::vector<std::shared_ptr<const Tensor>> &ts,
                               const std::vector<int64_t> &offset,
                               const std::vector<int> &exponent) {
  const int64_t c = ts[0]->dim(1);
  std::vector<double> sum(c, 0.0);
  int64_t count = 0;
  for (const auto &t : ts) {
    const int64_t n = t->dim(0), inner = t->size() / (n * c);
    for (int64_t i = 0; i < n; ++i) {
      Eigen::Map<const Eigen::Matrix<int32_t, Eigen::Dynamic, Eigen::Dynamic>> m(
          t->data<int32_t>() + i * c * inner, inner, c);
      const Eigen::VectorXd s = m.cast<double>().colwise().sum().transpose();
      for (int64_t k = 0; k < c; ++k) sum[k] += s[k];
    }
    count += n * inner;
  }
  for (int64_t k = 0; k < c; ++k)
    sum[k] = std::ldexp(sum[k] / double(count) - double(offset[k]), -exponent[k]);
  return sum;
}

}  // namespace

int correct_bias(Graph &graph, const Int8Forms &forms, const ChannelMeans &float_means,
                 const std::vector<std::vector<Tensor>> &batches) {
  const auto todo = layers(graph, forms, float_means);
  if (todo.empty() || batches.empty()) return 0;
  // Every batch's values are held at once: the first kChannelMeanBatches (those the float
  // model's channel means are taken over) bound the memory and the time.
  const std::vector<std::vector<Tensor>> used(
      batches.begin(), batches.begin() + std::min(batches.size(), kChannelMeanBatches));
  // The graph run node by node over every batch at once, so that each layer's correction is
  // measured with the layers before it corrected; a value is freed after its last use.
  const std::vector<Node *> nodes = graph.nodes();
  std::unordered_map<const Value *, size_t> last_use;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Value *in : nodes[i]->inputs)
      if (in) last_use[in] = i;
  using Env = std::unordered_map<const Value *, std::shared_ptr<const Tensor>>;
  std::vector<Env> env(used.size());
  for (size_t b = 0; b < used.size(); ++b) {
    if (used[b].size() != graph.inputs().size())
      fail("bias correction: a calibration batch has {} inputs, the graph {}", used[b].size(),
           graph.inputs().size());
    for (size_t i = 0; i < graph.inputs().size(); ++i)
      env[b][graph.inputs()[i]] = std::make_shared<const Tensor>(used[b][i]);
  }
  auto run = [&](const Node &n, Env &e) {
    std::vector<const Tensor *> in;
    for (const Value *v : n.inputs)
      in.push_back(!v ? nullptr : v->is_constant() ? v->constant.get() : e.at(v).get());
    std::vector<Tensor> outs = execute_node(n, in);
    for (size_t k = 0; k < n.outputs.size() && k < outs.size(); ++k)
      if (n.outputs[k]) e[n.outputs[k]] = std::make_shared<const Tensor>(std::move(outs[k]));
  };
  int corrected = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node &n = *nodes[i];
    for (Env &e : env) run(n, e);
    auto t = todo.find(&n);
    if (t != todo.end()) {
      const BiasedLayer &target = t->second;
      const int64_t channels = n.inputs[1]->constant->size();
      std::vector<int64_t> shifts = target.requant->attrs.get_ints("shifts");
      if (shifts.size() == 1) shifts.assign(channels, shifts[0]);
      const int fo = *target.requant->outputs[0]->frac_bits;
      std::vector<int64_t> rounding(channels);
      std::vector<int> exponent(channels);
      // The bias holds the rounding and the output's zero point times 2^shift (quantize.h).
      const int zp = target.requant->outputs[0]->zero_point;
      for (int64_t o = 0; o < channels; ++o) {
        rounding[o] = shifts[o] > 0 ? int64_t{1} << std::min<int64_t>(shifts[o] - 1, 62) : 0;
        rounding[o] += static_cast<int64_t>(std::ldexp(double(zp), int(shifts[o])));
        exponent[o] = static_cast<int>(shifts[o] + fo);
      }
      std::vector<std::shared_ptr<const Tensor>> sums;
      for (Env &e : env) sums.push_back(e.at(n.outputs[0]));
      const std::vector<double> got = real_means(sums, rounding, exponent);
      Tensor bias = *n.inputs[1]->constant;
      bool changed = false;
      for (int64_t o = 0; o < channels; ++o) {
        const double delta =
            std::nearbyint(std::ldexp((*target.float_mean)[o] - got[o], exponent[o]));
        if (delta == 0 || !std::isfinite(delta)) continue;
        const double v = std::clamp(double(bias.data<int32_t>()[o]) + delta,
                                    double(std::numeric_limits<int32_t>::min()),
                                    double(std::numeric_limits<int32_t>::max()));
        bias.data<int32_t>()[o] = static_cast<int32_t>(v);
        changed = true;
      }
      if (changed) {
        // The quantizer made this constant for this layer alone: replace its tensor.
        n.inputs[1]->constant = std::make_shared<const Tensor>(std::move(bias));
        for (Env &e : env) run(n, e);
        ++corrected;
      }
    }
    for (Env &e : env)
      for (const Value *in : n.inputs)
        if (in && !in->is_constant() && last_use[in] == i && !graph.is_output(in)) e.erase(in);
  }
  return corrected;
}

}  // namespace vacc::graph
