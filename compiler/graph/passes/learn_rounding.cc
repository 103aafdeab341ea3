#include "vacc/graph/passes/learn_rounding.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "vacc/support/error.h"

namespace vacc::graph {

namespace {

// The rectified sigmoid's stretch (AdaRound's zeta = 1.1, gamma = -0.1): h reaches 0 and 1 at
// finite v, so a choice can settle exactly.
constexpr float kZeta = 1.1f, kGamma = -0.1f;
// The rounding term's weight, the share of steps before it starts, and its exponent's range.
// With the error in grid steps per unit of input energy (below), lambda = 1 weighs a weight
// left half-way about as much as a lone error of one step: measured on small layers against the
// exhaustive optimum (tests/graph/learn_rounding_test.cc), 0.01 (AdaRound's, for its loss's
// scale) left 55 % of nearest rounding's distance to it, 0.1 to 10 11-14 %.
constexpr float kLambda = 1, kWarmUp = 0.2f, kBetaStart = 20, kBetaEnd = 2;
// Adam's step size and moments.
constexpr float kRate = 0.01f, kBeta1 = 0.9f, kBeta2 = 0.999f, kEpsilon = 1e-8f;

float soft_choice(float sigmoid) {
  return std::clamp(sigmoid * (kZeta - kGamma) + kGamma, 0.0f, 1.0f);
}

// A layer's output channels: a convolution's weights' first dimension, a dense layer's
// outputs.
int64_t output_channels(const Node &n) {
  const Value *w = n.input(1);
  if (n.op == OpKind::kConv) return w->shape[0];
  const bool trans_b = n.op == OpKind::kGemm && n.attrs.get_int("transB", 0);
  return trans_b ? w->shape[0] : w->shape[1];
}

// One group's Hessian in grid steps per unit of input energy (divided by its mean diagonal:
// a lone error of one step on an input of average energy then costs about 1, whatever the
// layer's scale), damped as round_weights damps it (kLearnedRoundingDamping on the diagonal,
// so that directions the few calibration inputs never took still cost something), and
// products with it: through the inputs X (h = X^T X) where they were kept, O * k * 2n
// multiply-adds instead of O * k^2.
class GroupHessian {
 public:
  GroupHessian(const InputHessian &h, int64_t g)
      : h_(Eigen::Map<const Eigen::MatrixXf>(h.h.data() + g * h.k * h.k, h.k, h.k)) {
    const float mean_diag = h_.diagonal().mean();
    const float scale = mean_diag > 0 ? 1 / mean_diag : 1;
    h_ *= scale;
    h_.diagonal().array() += kLearnedRoundingDamping;
    if (h.n > 0)
      x_ =
          Eigen::Map<const RowMatrix>(h.inputs.data() + g * h.n * h.k, h.n, h.k) * std::sqrt(scale);
  }
  // e H for rows of errors e.
  Eigen::MatrixXf times(const Eigen::MatrixXf &e) const {
    if (x_.rows() == 0) return e * h_;  // symmetric
    return (e * x_.transpose()) * x_ + kLearnedRoundingDamping * e;
  }
  // e H e^T of each row.
  Eigen::VectorXf costs(const Eigen::MatrixXf &e) const {
    if (x_.rows() == 0) return (e * h_).cwiseProduct(e).rowwise().sum();
    return (e * x_.transpose()).rowwise().squaredNorm() +
           kLearnedRoundingDamping * e.rowwise().squaredNorm();
  }
  const Eigen::MatrixXf &matrix() const { return h_; }

 private:
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::MatrixXf h_;
  Eigen::MatrixXf x_;  // n x k, or empty
};

// Flips single choices (level below <-> above) of each channel while one lowers its e H e^T:
// the change of flipping weight i by d is d^2 H_ii + 2 d (H e)_i, and (H e) is kept current.
// A few sweeps of O(k) per flip, after one product with H; it takes the descent's answer to
// the nearest point that no single flip improves.
void settle_choices(const GroupHessian &hess, const Eigen::MatrixXf &x,
                    const Eigen::MatrixXf &below, const Eigen::MatrixXf &free,
                    Eigen::MatrixXf *levels) {
  constexpr int kSweeps = 20;
  const Eigen::MatrixXf &h = hess.matrix();
  const Eigen::MatrixXf all = hess.times(*levels - x);
  for (int64_t r = 0; r < levels->rows(); ++r) {
    Eigen::VectorXf he = all.row(r).transpose();
    for (int sweep = 0; sweep < kSweeps; ++sweep) {
      bool moved = false;
      for (int64_t i = 0; i < h.rows(); ++i) {
        if (free(r, i) == 0) continue;
        const float d = (*levels)(r, i) == below(r, i) ? 1.0f : -1.0f;
        if (h(i, i) + 2 * d * he[i] < -1e-6f * h(i, i)) {
          (*levels)(r, i) += d;
          he += d * h.col(i);
          moved = true;
        }
      }
      if (!moved) break;
    }
  }
}

}  // namespace

LearnedRounding learn_rounding(const Tensor &w, const std::vector<int> &frac_bits,
                               const InputHessian &h, int steps) {
  const int64_t o_all = w.dim(0), k = w.size() / o_all;
  VACC_CHECK(k == h.k && o_all % h.groups == 0 && int64_t(frac_bits.size()) == o_all && steps > 0)
      << "learn_rounding: weights " << shape_str(w.shape()) << " for a Hessian of " << h.groups
      << " x " << h.k << ", " << steps << " steps";
  const int64_t rows = o_all / h.groups;
  LearnedRounding out;
  out.levels = Tensor(DType::kInt8, w.shape());
  out.channels = o_all;
  const int warm = static_cast<int>(kWarmUp * float(steps));
  for (int64_t g = 0; g < h.groups; ++g) {
    const GroupHessian hess(h, g);
    // Levels in grid steps: the float weight x, the level below it, and whether the choice is
    // free (a weight at or beyond the grid's ends keeps its clamped level).
    Eigen::MatrixXf x(rows, k), below(rows, k), free(rows, k), v(rows, k);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t o = g * rows + r;
      for (int64_t i = 0; i < k; ++i) {
        const float xi = std::ldexp(w.data<float>()[o * k + i], frac_bits[size_t(o)]);
        x(r, i) = xi;
        const bool open = xi > -128.0f && xi < 127.0f;
        below(r, i) = open ? std::floor(xi) : std::clamp(std::nearbyint(xi), -128.0f, 127.0f);
        free(r, i) = open ? 1.0f : 0.0f;
        // Start where the soft choice equals the weight's remainder (AdaRound's start).
        const float p = (xi - below(r, i) - kGamma) / (kZeta - kGamma);
        v(r, i) = open ? std::log(p / (1 - p)) : 0.0f;
      }
    }
    Eigen::MatrixXf m = Eigen::MatrixXf::Zero(rows, k), s = m, choice(rows, k), grad(rows, k);
    for (int t = 0; t < steps; ++t) {
      const Eigen::ArrayXXf sig = (1.0f + (-v.array()).exp()).inverse();
      choice = sig.matrix().unaryExpr(&soft_choice).cwiseProduct(free);
      grad = 2.0f * hess.times(below + choice - x);
      if (t >= warm) {
        const float progress = steps - warm > 1 ? float(t - warm) / float(steps - warm - 1) : 1;
        const float beta = kBetaStart + (kBetaEnd - kBetaStart) * progress;
        // d/dh of lambda * (1 - |2h - 1|^beta).
        grad.array() -= kLambda * 2 * beta * (2 * choice.array() - 1).sign() *
                        (2 * choice.array() - 1).abs().pow(beta - 1);
      }
      // Through the rectified sigmoid: no gradient where it is clipped or the weight is fixed.
      const Eigen::ArrayXXf inner = sig * (kZeta - kGamma) + kGamma;
      grad.array() *= (inner > 0 && inner < 1).cast<float>() * free.array() * (kZeta - kGamma) *
                      sig * (1 - sig);
      m = kBeta1 * m + (1 - kBeta1) * grad;
      s = kBeta2 * s + (1 - kBeta2) * grad.cwiseAbs2();
      const float c1 = 1 - std::pow(kBeta1, float(t + 1)), c2 = 1 - std::pow(kBeta2, float(t + 1));
      v.array() -= kRate * (m.array() / c1) / ((s.array() / c2).sqrt() + kEpsilon);
    }
    // Hard choices, settled by single flips, each channel against nearest rounding.
    const Eigen::MatrixXf sig = (1.0f + (-v.array()).exp()).inverse().matrix();
    Eigen::MatrixXf learned =
        below +
        (sig.unaryExpr(&soft_choice).array() >= 0.5f).cast<float>().matrix().cwiseProduct(free);
    settle_choices(hess, x, below, free, &learned);
    const Eigen::MatrixXf nearest =
        x.unaryExpr([](float xi) { return std::clamp(std::nearbyint(xi), -128.0f, 127.0f); });
    const Eigen::VectorXf cost_learned = hess.costs(learned - x);
    const Eigen::VectorXf cost_nearest = hess.costs(nearest - x);
    for (int64_t r = 0; r < rows; ++r) {
      const bool take = cost_learned[r] < cost_nearest[r];
      out.learned += take;
      out.nearest_error += cost_nearest[r];
      out.error += take ? cost_learned[r] : cost_nearest[r];
      const Eigen::MatrixXf &levels = take ? learned : nearest;
      for (int64_t i = 0; i < k; ++i)
        out.levels.data<int8_t>()[(g * rows + r) * k + i] = static_cast<int8_t>(levels(r, i));
    }
  }
  return out;
}

std::unordered_map<std::string, int> learned_rounding_steps(const Graph &graph,
                                                            const InputHessians &hessians,
                                                            double seconds) {
  // (multiply-adds per step, name), cheapest first.
  std::vector<std::pair<double, std::string>> layers;
  for (const Node *n : graph.nodes()) {
    auto it = hessians.find(n->name);
    if (it == hessians.end()) continue;
    const InputHessian &h = it->second;
    // A product with H, or with the inputs X and X^T where they were kept.
    const double inner = h.n > 0 ? double(std::min(h.k, 2 * h.n)) : double(h.k);
    layers.emplace_back(double(output_channels(*n)) * double(h.k) * inner, n->name);
  }
  std::sort(layers.begin(), layers.end());
  double budget = std::max(0.0, seconds) * kLearnedRoundingMacsPerSecond;
  std::unordered_map<std::string, int> steps;
  for (size_t i = 0; i < layers.size(); ++i) {
    const double share = budget / double(layers.size() - i);
    const double fits = std::floor(share / std::max(1.0, layers[i].first));
    const int n = fits < kLearnedRoundingMinSteps
                      ? 0
                      : static_cast<int>(std::min<double>(kLearnedRoundingMaxSteps, fits));
    if (n) steps[layers[i].second] = n;
    budget -= double(n) * layers[i].first;
  }
  return steps;
}

}  // namespace vacc::graph
