#include "vacc/graph/quant_report.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "vacc/graph/op_registry.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/support/error.h"

namespace vacc::graph {

double sqnr_db(double signal, double noise) {
  if (noise <= 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool constant_clip(const Node &n) {
  if (n.op != OpKind::kClip) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] && !n.inputs[i]->is_constant()) return false;
  return true;
}

// One layer: a chain of float values, each the sole input of the next's producer.
struct ReportLayer {
  LayerQuantStats stats;
  std::vector<std::string> members;  // float values, the last compared
  const Value *int8_end = nullptr;
  // The int8 graph's nodes from the layer's inputs to int8_end, in graph order, and the
  // values they start from: int8 forms of other float values (fed the float value quantized)
  // and float graph inputs (fed as they are), each with the float value's name.
  std::vector<const Node *> nodes;
  std::vector<std::pair<const Value *, std::string>> int8_inputs, float_inputs;
  bool local = true;  // false: its inputs could not be traced (no sqnr_local)
  double signal = 0, noise_local = 0, noise_chained = 0;
  int64_t clipped = 0;
};

std::optional<WeightRange> weight_range(const Node &n) {
  if (n.inputs.size() < 2 || !n.inputs[1] || !n.inputs[1]->is_constant()) return std::nullopt;
  const Tensor &w = *n.inputs[1]->constant;
  if (w.dtype() != DType::kFloat32 || w.rank() < 2) return std::nullopt;
  // The output channel's dimension: Conv's first, a MatMul's [K, M] last, Gemm's by transB.
  int axis;
  if (n.op == OpKind::kConv) {
    axis = 0;
  } else if (n.op == OpKind::kGemm && w.rank() == 2) {
    axis = n.attrs.get_int("transB", 0) ? 0 : 1;
  } else if (n.op == OpKind::kMatMul && w.rank() == 2) {
    axis = 1;
  } else {
    return std::nullopt;
  }
  const int64_t channels = w.dim(axis), inner = w.size() / channels;
  std::vector<float> maxes(channels, 0.0f);
  const float *p = w.data<float>();
  for (int64_t i = 0; i < w.size(); ++i) {
    const int64_t c = axis == 0 ? i / inner : i % channels;
    maxes[c] = std::max(maxes[c], std::abs(p[i]));
  }
  WeightRange r;
  r.channels = channels;
  std::vector<float> sorted = maxes;
  std::sort(sorted.begin(), sorted.end());
  r.min = sorted.front();
  r.max = sorted.back();
  r.median = sorted[sorted.size() / 2];
  r.frac_bits_min = frac_bits_for(r.max);
  r.frac_bits_max = frac_bits_for(r.min);
  return r;
}

// The float tensor quantized as QuantizeLinear does at scale 2^-f and zero point zp (round
// half to even, saturate).
Tensor quantized(const Tensor &f, int frac_bits, int zp) {
  Tensor q(DType::kInt8, f.shape());
  const float *p = f.data<float>();
  int8_t *out = q.data<int8_t>();
  for (int64_t i = 0; i < f.size(); ++i)
    out[i] = static_cast<int8_t>(
        std::clamp(std::nearbyint(std::ldexp(double(p[i]), frac_bits)) + zp, -128.0, 127.0));
  return q;
}

// Sum of f^2 and of (f - (q - zp) * 2^-frac_bits)^2.
std::pair<double, double> energies(const Tensor &f, const Tensor &q, int frac_bits, int zp) {
  Eigen::Map<const Eigen::ArrayXf> a(f.data<float>(), f.size());
  Eigen::Map<const Eigen::Array<int8_t, Eigen::Dynamic, 1>> b(q.data<int8_t>(), q.size());
  const Eigen::ArrayXd fd = a.cast<double>();
  const Eigen::ArrayXd d = fd - (b.cast<double>() - zp) * std::ldexp(1.0, -frac_bits);
  return {fd.square().sum(), d.square().sum()};
}

class Reporter {
 public:
  Reporter(const Graph &fg, const Graph &qg, const Int8Forms &forms,
           const std::unordered_set<std::string> &kept)
      : fg_(fg), qg_(qg), forms_(forms), kept_(kept) {
    for (const auto &[name, q] : forms) name_of_[q] = name;
    build_layers();
    for (ReportLayer &l : layers_)
      if (!l.stats.kept_float) trace(l);
  }

  QuantReport run(const std::vector<std::vector<Tensor>> &inputs) {
    if (inputs.empty()) fail("the quantization report needs at least one input");
    QuantReport report;
    const size_t outs = fg_.outputs().size();
    std::vector<double> out_signal(outs), out_noise(outs), out_dot(outs), out_qq(outs);
    for (const std::vector<Tensor> &batch : inputs) {
      std::unordered_map<std::string, Tensor> fvals;
      const std::vector<Tensor> fout =
          ReferenceExecutor(fg_).run(batch, [&](const Value &v, const Tensor &t) {
            if (needed_.count(v.name)) fvals.emplace(v.name, t);
          });
      const std::vector<Tensor> qout =
          ReferenceExecutor(qg_).run(batch, [&](const Value &v, const Tensor &t) {
            auto it = layer_of_end_.find(&v);
            if (it == layer_of_end_.end()) return;
            ReportLayer &l = layers_[it->second];
            const Tensor &f = fvals.at(l.members.back());
            observe(l, f, t);
            l.noise_chained += energies(f, t, *v.frac_bits, v.zero_point).second;
          });
      for (ReportLayer &l : layers_) local(l, fvals);
      for (size_t i = 0; i < outs && i < fout.size() && i < qout.size(); ++i) {
        if (fout[i].dtype() != DType::kFloat32 || qout[i].dtype() != DType::kFloat32) continue;
        Eigen::Map<const Eigen::ArrayXf> f(fout[i].data<float>(), fout[i].size());
        Eigen::Map<const Eigen::ArrayXf> q(qout[i].data<float>(), qout[i].size());
        out_signal[i] += f.cast<double>().square().sum();
        out_noise[i] += (f.cast<double>() - q.cast<double>()).square().sum();
        out_dot[i] += (f.cast<double>() * q.cast<double>()).sum();
        out_qq[i] += q.cast<double>().square().sum();
      }
      ++report.inputs;
    }
    for (size_t i = 0; i < outs; ++i) {
      report.output_sqnr.push_back(sqnr_db(out_signal[i], out_noise[i]));
      const double denom = std::sqrt(out_signal[i] * out_qq[i]);
      report.output_cosine.push_back(denom > 0 ? out_dot[i] / denom : 1.0);
    }
    for (ReportLayer &l : layers_) {
      LayerQuantStats s = l.stats;
      if (s.kept_float) {
        s.sqnr_local = s.sqnr_chained = std::numeric_limits<double>::infinity();
        report.layers.push_back(std::move(s));
        continue;
      }
      s.sqnr_chained = sqnr_db(l.signal, l.noise_chained);
      s.sqnr_local = l.local ? sqnr_db(l.signal, l.noise_local) : kNaN;
      s.clipped = s.elements ? double(l.clipped) / double(s.elements) : 0.0;
      report.layers.push_back(std::move(s));
    }
    report.ranking.resize(report.layers.size());
    for (size_t i = 0; i < report.ranking.size(); ++i) report.ranking[i] = i;
    auto key = [&](size_t i) {
      const LayerQuantStats &s = report.layers[i];
      const double inf = std::numeric_limits<double>::infinity();
      return std::pair(std::isnan(s.sqnr_local) ? inf : s.sqnr_local, s.sqnr_chained);
    };
    std::stable_sort(report.ranking.begin(), report.ranking.end(),
                     [&](size_t a, size_t b) { return key(a) < key(b); });
    return report;
  }

 private:
  // A float value that only the activation or int8 pass-through after it reads, where that
  // has an int8 form too: it belongs to the same layer.
  const Node *absorbed_by(const Value *v) const {
    if (fg_.is_output(v)) return nullptr;
    const std::vector<Node *> users = fg_.consumers(v);
    if (users.size() != 1) return nullptr;
    const Node *c = users[0];
    if (c->inputs.empty() || c->inputs[0] != v || !c->outputs[0] ||
        !forms_.count(c->outputs[0]->name))
      return nullptr;
    const bool activation = c->op == OpKind::kRelu || constant_clip(*c);
    return activation || op_def(c->op).quantize == QuantRule::kPassThrough ? c : nullptr;
  }

  void build_layers() {
    std::unordered_map<const Value *, size_t> layer_of;
    auto add = [&](const Value *v, const Node *n) {
      if (!forms_.count(v->name)) return;
      const Value *in = n && !n->inputs.empty() ? n->inputs[0] : nullptr;
      auto it = in ? layer_of.find(in) : layer_of.end();
      if (it != layer_of.end() && absorbed_by(in) == n) {
        ReportLayer &l = layers_[it->second];
        l.stats.ops += std::string("+") + op_def(n->op).name;
        l.members.push_back(v->name);
        layer_of[v] = it->second;
        return;
      }
      ReportLayer l;
      l.stats.name = n ? n->name : v->name;
      l.stats.ops = n ? op_def(n->op).name : "input";
      l.members.push_back(v->name);
      if (n) l.stats.weights = weight_range(*n);
      layer_of[v] = layers_.size();
      layers_.push_back(std::move(l));
    };
    for (const Value *v : fg_.inputs()) add(v, nullptr);
    for (const Node *n : fg_.nodes()) {
      if (n->outputs.empty() || !n->outputs[0]) continue;
      if (kept_.count(n->name)) {
        ReportLayer l;
        l.stats.name = n->name;
        l.stats.ops = op_def(n->op).name;
        l.stats.value = n->outputs[0]->name;
        l.stats.kept_float = true;
        l.stats.weights = weight_range(*n);
        l.local = false;
        layers_.push_back(std::move(l));
        continue;
      }
      add(n->outputs[0], n);
    }
    for (size_t i = 0; i < layers_.size(); ++i) {
      ReportLayer &l = layers_[i];
      if (l.stats.kept_float) continue;
      l.stats.value = l.members.back();
      l.int8_end = forms_.at(l.stats.value);
      l.stats.frac_bits = l.int8_end->frac_bits.value_or(0);
      l.stats.zero_point = l.int8_end->zero_point;
      l.stats.int8_max =
          static_cast<float>(std::ldexp(127.0 - l.stats.zero_point, -l.stats.frac_bits));
      layer_of_end_[l.int8_end] = i;
      needed_.insert(l.stats.value);
    }
  }

  // The int8 graph's nodes between the layer's inputs and its int8 output.
  void trace(ReportLayer &l) {
    std::unordered_set<const Value *> interior;
    for (size_t i = 0; i + 1 < l.members.size(); ++i) interior.insert(forms_.at(l.members[i]));
    std::unordered_set<const Value *> seen;
    std::unordered_set<const Node *> nodes;
    std::vector<const Value *> stack = {l.int8_end};
    while (!stack.empty()) {
      const Value *u = stack.back();
      stack.pop_back();
      if (!u || u->is_constant() || !seen.insert(u).second) continue;
      auto named = name_of_.find(u);
      if (u != l.int8_end && named != name_of_.end() && !interior.count(u)) {
        if (u->dtype != DType::kInt8 || !u->frac_bits) l.local = false;
        l.int8_inputs.emplace_back(u, named->second);
        needed_.insert(named->second);
      } else if (!u->producer) {
        l.float_inputs.emplace_back(u, u->name);
        needed_.insert(u->name);
      } else if (nodes.insert(u->producer).second) {
        for (const Value *in : u->producer->inputs) stack.push_back(in);
      }
    }
    for (const Node *n : qg_.nodes())
      if (nodes.count(n)) l.nodes.push_back(n);
    if (l.int8_end->dtype != DType::kInt8 || !l.int8_end->frac_bits) l.local = false;
  }

  void observe(ReportLayer &l, const Tensor &f, const Tensor &q) {
    const int fb = l.stats.frac_bits;
    Eigen::Map<const Eigen::ArrayXf> a(f.data<float>(), f.size());
    const double step = std::ldexp(1.0, -fb);
    const int zp = l.stats.zero_point;
    const auto [signal, noise] = energies(f, q, fb, zp);
    (void)noise;
    l.signal += signal;
    if (l.stats.elements == 0) {
      l.stats.min = a.minCoeff();
      l.stats.max = a.maxCoeff();
    } else {
      l.stats.min = std::min(l.stats.min, a.minCoeff());
      l.stats.max = std::max(l.stats.max, a.maxCoeff());
    }
    l.clipped +=
        ((a.cast<double>() > (127.5 - zp) * step) || (a.cast<double>() < (-128.5 - zp) * step))
            .count();
    l.stats.elements += f.size();
  }

  // The layer's int8 output from the float model's values at its inputs.
  void local(ReportLayer &l, const std::unordered_map<std::string, Tensor> &fvals) {
    if (!l.local) return;
    std::unordered_map<const Value *, Tensor> env;
    for (const auto &[u, name] : l.int8_inputs) {
      const Tensor &f = fvals.at(name);
      if (f.shape() != u->shape || f.dtype() != DType::kFloat32) {
        l.local = false;
        return;
      }
      env.emplace(u, quantized(f, *u->frac_bits, u->zero_point));
    }
    for (const auto &[u, name] : l.float_inputs) {
      auto it = fvals.find(name);
      if (it == fvals.end()) {
        l.local = false;
        return;
      }
      env.emplace(u, it->second);
    }
    for (const Node *n : l.nodes) {
      std::vector<const Tensor *> in;
      for (const Value *v : n->inputs)
        in.push_back(!v ? nullptr : v->is_constant() ? v->constant.get() : &env.at(v));
      std::vector<Tensor> outs = execute_node(*n, in);
      for (size_t k = 0; k < n->outputs.size() && k < outs.size(); ++k)
        if (n->outputs[k]) env.insert_or_assign(n->outputs[k], std::move(outs[k]));
    }
    l.noise_local +=
        energies(fvals.at(l.stats.value), env.at(l.int8_end), l.stats.frac_bits, l.stats.zero_point)
            .second;
  }

  const Graph &fg_;
  const Graph &qg_;
  const Int8Forms &forms_;
  const std::unordered_set<std::string> &kept_;
  std::unordered_map<const Value *, std::string> name_of_;  // int8 form -> float value's name
  std::vector<ReportLayer> layers_;
  std::unordered_map<const Value *, size_t> layer_of_end_;
  std::unordered_set<std::string> needed_;  // float values the layers compare or start from
};

}  // namespace

QuantReport quant_report(const Graph &float_graph, const Graph &int8_graph, const Int8Forms &forms,
                         const std::vector<std::vector<Tensor>> &inputs,
                         const std::unordered_set<std::string> &kept_float) {
  return Reporter(float_graph, int8_graph, forms, kept_float).run(inputs);
}

}  // namespace vacc::graph
