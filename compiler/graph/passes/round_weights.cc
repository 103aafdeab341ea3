#include "vacc/graph/passes/round_weights.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "vacc/graph/blocked_layout.h"
#include "vacc/graph/reference_executor.h"
#include "vacc/support/error.h"

namespace vacc::graph {

namespace {

using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A layer whose Hessian is collected: the node, and the attributes its input is unfolded with
// (a convolution's, with kernel_shape from its weights where the model leaves it out).
struct Collected {
  const Node *node;
  Attributes unfold;
  bool conv;
};

bool dense_by_constant(const Node &n) {
  if (n.op == OpKind::kGemm)
    return n.attrs.get_int("transA", 0) == 0 && n.input(1) && n.input(1)->is_constant() &&
           n.input(1)->rank() == 2;
  return n.op == OpKind::kMatMul && n.input(1) && n.input(1)->is_constant() &&
         n.input(1)->rank() == 2;
}

}  // namespace

InputHessians input_hessians(const Graph &graph, const std::vector<std::vector<Tensor>> &batches,
                             bool keep_inputs, size_t max_layer_bytes) {
  std::unordered_map<const Value *, std::vector<Collected>> readers;
  InputHessians out;
  for (const Node *n : graph.nodes()) {
    const Value *x = n->input(0), *w = n->input(1);
    if (!x || !w || !w->is_constant() || w->dtype != DType::kFloat32) continue;
    InputHessian h;
    Collected c{n, n->attrs, false};
    if (n->op == OpKind::kConv && w->rank() == 4 && x->rank() == 4) {
      h.groups = n->attrs.get_int("group", 1);
      h.k = w->shape[1] * w->shape[2] * w->shape[3];
      if (!c.unfold.has("kernel_shape"))
        c.unfold.set("kernel_shape", std::vector<int64_t>{w->shape[2], w->shape[3]});
      c.conv = true;
    } else if (dense_by_constant(*n)) {
      const bool trans_b = n->op == OpKind::kGemm && n->attrs.get_int("transB", 0);
      h.k = trans_b ? w->shape[1] : w->shape[0];
    } else {
      continue;
    }
    const size_t bytes = size_t(h.groups) * size_t(h.k) * size_t(h.k) * sizeof(float);
    if (h.k <= 0 || bytes > max_layer_bytes) continue;
    h.h.assign(size_t(h.groups * h.k * h.k), 0.0f);
    out[n->name] = std::move(h);
    readers[x].push_back(std::move(c));
  }
  // Each layer's inputs while they number at most k / 2 per group (InputHessian::inputs); a
  // layer that passes that keeps its Hessian only.
  struct Kept {
    std::vector<std::vector<float>> groups;
    bool over = false;
  };
  std::unordered_map<std::string, Kept> kept;
  auto keep = [&](const std::string &name, const InputHessian &h, int64_t g, int64_t rows,
                  auto row_value) {
    if (!keep_inputs) return;
    Kept &k = kept[name];
    if (k.over) return;
    if (k.groups.empty()) k.groups.resize(size_t(h.groups));
    std::vector<float> &dst = k.groups[size_t(g)];
    if (int64_t(dst.size()) / h.k + rows > h.k / 2) {
      k.over = true;
      k.groups.clear();
      return;
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < h.k; ++j) dst.push_back(row_value(r, j));
  };
  ReferenceExecutor executor(graph);
  auto accumulate = [&](const Value &v, const Tensor &t) {
    auto it = readers.find(&v);
    if (it == readers.end() || t.dtype() != DType::kFloat32) return;
    for (const Collected &c : it->second) {
      InputHessian &h = out.at(c.node->name);
      if (c.conv) {
        // [N, C*kh*kw, OH, OW]: per item and group a (positions x k) column-major block.
        const Tensor u = unfold_windows(t, c.unfold);
        const int64_t n = u.dim(0), p = u.dim(2) * u.dim(3);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t g = 0; g < h.groups; ++g) {
            Eigen::Map<const Eigen::MatrixXf> x(u.data<float>() + (i * h.groups + g) * h.k * p, p,
                                                h.k);
            Eigen::Map<Eigen::MatrixXf> hg(h.h.data() + g * h.k * h.k, h.k, h.k);
            hg.noalias() += x.transpose() * x;
            keep(c.node->name, h, g, p, [&](int64_t r, int64_t j) { return x(r, j); });
          }
      } else {
        // Rows of k inputs: all dimensions but the last.
        const int64_t rows = t.size() / h.k;
        Eigen::Map<const RowMatrixXf> x(t.data<float>(), rows, h.k);
        Eigen::Map<Eigen::MatrixXf> hg(h.h.data(), h.k, h.k);
        hg.noalias() += x.transpose() * x;
        keep(c.node->name, h, 0, rows, [&](int64_t r, int64_t j) { return x(r, j); });
      }
    }
  };
  for (const std::vector<Tensor> &b : batches) executor.run(b, accumulate);
  for (auto &[name, k] : kept) {
    if (k.over || k.groups.empty()) continue;
    InputHessian &h = out.at(name);
    h.n = int64_t(k.groups[0].size()) / h.k;
    for (const std::vector<float> &g : k.groups)
      h.inputs.insert(h.inputs.end(), g.begin(), g.end());
  }
  return out;
}

Tensor round_weights(const Tensor &w, const std::vector<int> &frac_bits, const InputHessian &h) {
  const int64_t o_all = w.dim(0), inner = w.size() / o_all;
  VACC_CHECK(inner == h.k && o_all % h.groups == 0 && int64_t(frac_bits.size()) == o_all)
      << "round_weights: weights " << shape_str(w.shape()) << " for a Hessian of " << h.groups
      << " x " << h.k;
  const int64_t per_group = o_all / h.groups, k = h.k;
  constexpr int64_t kBlock = 128;  // columns rounded before the rest is updated at once
  Tensor q(DType::kInt8, w.shape());
  for (int64_t g = 0; g < h.groups; ++g) {
    // In float, as GPTQ computes it: the damping below keeps it well conditioned, and a layer
    // of 4 608 inputs factors in a third of double's time.
    Eigen::MatrixXf hess = Eigen::Map<const Eigen::MatrixXf>(h.h.data() + g * k * k, k, k);
    // Inputs that were always zero carry no information: any rounding is as good.
    for (int64_t i = 0; i < k; ++i)
      if (hess(i, i) <= 0) hess(i, i) = 1;
    // Damping as GPTQ's (1 % of the mean diagonal) keeps the factorization well conditioned.
    hess.diagonal().array() += 0.01f * hess.diagonal().mean();
    // The upper Cholesky factor U of H^-1 (H^-1 = U^T U) without forming H^-1: with J the
    // reversal, J H J = L L^T gives H = V V^T for the upper V = J L J, so U = V^-1.
    const Eigen::MatrixXf lower = hess.reverse().llt().matrixL();
    const Eigen::MatrixXf v = lower.reverse();
    const Eigen::MatrixXf u =
        v.triangularView<Eigen::Upper>().solve(Eigen::MatrixXf::Identity(k, k));
    // This group's channels, one row each, updated in place as the inputs are rounded.
    Eigen::MatrixXf rows(per_group, k);
    Eigen::VectorXf step(per_group);
    for (int64_t r = 0; r < per_group; ++r) {
      const int64_t o = g * per_group + r;
      step[r] = std::ldexp(1.0f, -frac_bits[size_t(o)]);
      for (int64_t i = 0; i < k; ++i) rows(r, i) = w.data<float>()[o * k + i];
    }
    for (int64_t b0 = 0; b0 < k; b0 += kBlock) {
      const int64_t b1 = std::min(k, b0 + kBlock);
      Eigen::MatrixXf errs(per_group, b1 - b0);
      for (int64_t i = b0; i < b1; ++i) {
        for (int64_t r = 0; r < per_group; ++r) {
          const float level = std::clamp(std::nearbyint(rows(r, i) / step[r]), -128.0f, 127.0f);
          q.data<int8_t>()[(g * per_group + r) * k + i] = static_cast<int8_t>(level);
          errs(r, i - b0) = (rows(r, i) - level * step[r]) / u(i, i);
        }
        if (i + 1 < b1)
          rows.middleCols(i + 1, b1 - i - 1).noalias() -=
              errs.col(i - b0) * u.row(i).segment(i + 1, b1 - i - 1);
      }
      if (b1 < k) rows.rightCols(k - b1).noalias() -= errs * u.block(b0, b1, b1 - b0, k - b1);
    }
  }
  return q;
}

}  // namespace vacc::graph
