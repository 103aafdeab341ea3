#include "vacc/graph/passes/calibrate.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/reference_executor.h"

namespace vacc::graph {

namespace {

constexpr int kLevels = 128;    // magnitudes a symmetric int8 value holds (entropy's Q)
constexpr int kCandidates = 8;  // power-of-two scales tried below the largest magnitude's

// The fraction bits a histogram method chooses among: the scale that holds abs_max, then the
// next finer ones (which clip more).
std::vector<int> candidate_frac_bits(float abs_max) {
  std::vector<int> out;
  for (int f = frac_bits_for(abs_max); f <= frac_bits_for(abs_max) + kCandidates && f <= 30; ++f)
    out.push_back(f);
  return out;
}

// The range of scale 2^-f: 127 steps; abs_max itself for the scale that holds it (what
// minmax returns for it too).
float threshold_of(int f, float abs_max) {
  return f == frac_bits_for(abs_max) ? abs_max : static_cast<float>(std::ldexp(127.0, -f));
}

float percentile_threshold(const std::vector<double> &hist, float abs_max, double percentile) {
  double total = 0;
  for (double h : hist) total += h;
  const double want = total * percentile / 100.0, width = double(abs_max) / hist.size();
  double seen = 0;
  for (size_t b = 0; b < hist.size(); ++b) {
    seen += hist[b];
    if (seen >= want) return static_cast<float>(std::min<double>(abs_max, (b + 1) * width));
  }
  return abs_max;
}

// Expected squared error of quantizing the histogram's magnitudes at scale 2^-f (largest
// level t = 127 steps): rounding error inside the range (a value below half a step becomes
// 0), the distance to the largest level outside it. Bins are taken at their centers.
double squared_error(const std::vector<double> &hist, float abs_max, int f) {
  const double width = double(abs_max) / hist.size(), step = std::ldexp(1.0, -f);
  const double t = 127 * step, round_err = step * step / 12.0, limit = t + step / 2;
  double err = 0;
  for (size_t b = 0; b < hist.size(); ++b) {
    if (hist[b] == 0) continue;
    const double c = (b + 0.5) * width;
    err += hist[b] * (c > limit ? (c - t) * (c - t) : std::min(c * c, round_err));
  }
  return err;
}

// KL(P || Q): P is the histogram's first `keep` bins with the rest added to its last bin, Q
// the first `keep` bins merged into kLevels levels, each level's count spread evenly over its
// non-empty bins (TensorRT's entropy calibration).
double kl_divergence(const std::vector<double> &hist, size_t keep) {
  std::vector<double> p(hist.begin(), hist.begin() + keep), q(keep, 0.0);
  for (size_t b = keep; b < hist.size(); ++b) p[keep - 1] += hist[b];
  for (int level = 0; level < kLevels; ++level) {
    const size_t lo = keep * level / kLevels, hi = keep * (level + 1) / kLevels;
    double sum = 0;
    int nonzero = 0;
    for (size_t b = lo; b < hi; ++b) {
      sum += hist[b];
      nonzero += hist[b] != 0;
    }
    for (size_t b = lo; b < hi; ++b)
      if (hist[b] != 0) q[b] = sum / nonzero;
  }
  double sp = 0, sq = 0;
  for (size_t b = 0; b < keep; ++b) {
    sp += p[b];
    sq += q[b];
  }
  if (sp == 0 || sq == 0) return 0;
  double kl = 0;
  for (size_t b = 0; b < keep; ++b) {
    if (p[b] == 0) continue;
    // A bin P has and Q lacks (clipped outliers in the last bin): a small floor on Q, as
    // TensorRT smooths it, makes it costly rather than infinite.
    const double pn = p[b] / sp, qn = std::max(q[b] / sq, 1e-12);
    kl += pn * std::log(pn / qn);
  }
  return kl;
}

}  // namespace

CalibrationMethod calibration_method_from_name(const std::string &name, const std::string &option) {
  for (CalibrationMethod m : {CalibrationMethod::kMinMax, CalibrationMethod::kPercentile,
                              CalibrationMethod::kMse, CalibrationMethod::kEntropy})
    if (name == calibration_method_name(m)) return m;
  fail("{} '{}': choose minmax, percentile, mse or entropy", option, name);
}

const char *calibration_method_name(CalibrationMethod method) {
  switch (method) {
    case CalibrationMethod::kMinMax:
      return "minmax";
    case CalibrationMethod::kPercentile:
      return "percentile";
    case CalibrationMethod::kMse:
      return "mse";
    case CalibrationMethod::kEntropy:
      return "entropy";
  }
  return "?";
}

float Calibration::range(const Value *v) const {
  auto it = threshold.find(v);
  return it == threshold.end() ? 0.0f : it->second;
}

float choose_threshold(const std::vector<double> &hist, float abs_max,
                       const CalibrationOptions &options) {
  if (!(abs_max > 0) || hist.empty()) return abs_max;
  switch (options.method) {
    case CalibrationMethod::kMinMax:
      return abs_max;
    case CalibrationMethod::kPercentile:
      return percentile_threshold(hist, abs_max, options.percentile);
    case CalibrationMethod::kMse: {
      float best = abs_max;
      double best_err = std::numeric_limits<double>::infinity();
      for (int f : candidate_frac_bits(abs_max)) {
        const double err = squared_error(hist, abs_max, f);
        if (err < best_err) best_err = err, best = threshold_of(f, abs_max);
      }
      return best;
    }
    case CalibrationMethod::kEntropy: {
      float best = abs_max;
      double best_kl = std::numeric_limits<double>::infinity();
      const double width = double(abs_max) / hist.size();
      for (int f : candidate_frac_bits(abs_max)) {
        const double t = std::ldexp(127.0, -f);
        const size_t keep = std::min(hist.size(), size_t(std::lround(t / width)));
        if (keep < size_t(kLevels)) break;
        const double kl = kl_divergence(hist, keep);
        if (kl < best_kl) best_kl = kl, best = threshold_of(f, abs_max);
      }
      return best;
    }
  }
  return abs_max;
}

Calibration calibrate(const Graph &graph, const std::vector<std::vector<Tensor>> &batches,
                      const CalibrationOptions &options) {
  if (batches.empty()) fail("calibration needs at least one batch of sample inputs");
  if (options.method == CalibrationMethod::kPercentile &&
      !(options.percentile > 0 && options.percentile <= 100))
    fail("--percentile {}: give a percentile in (0, 100], e.g. 99.99", options.percentile);
  if (options.bins < kLevels)
    fail("calibration histograms need at least {} bins, got {}", kLevels, options.bins);
  Calibration calib;
  calib.method = options.method;
  ReferenceExecutor executor(graph);
  size_t batch_index = 0;  // of the batch each_float runs
  auto each_float = [&](const std::function<void(const Value &, const Tensor &)> &f) {
    for (batch_index = 0; batch_index < batches.size(); ++batch_index) {
      executor.run(batches[batch_index], [&](const Value &v, const Tensor &t) {
        if (t.dtype() == DType::kFloat32 && t.size() > 0) f(v, t);
      });
    }
  };
  std::unordered_map<const Value *, int64_t> mean_count;
  each_float([&](const Value &v, const Tensor &t) {
    Eigen::Map<const Eigen::ArrayXf> a(t.data<float>(), t.size());
    float &slot = calib.abs_max[&v];
    slot = std::max(slot, a.abs().maxCoeff());
    if (t.rank() < 2 || t.dim(1) == 0 || batch_index >= kChannelMeanBatches) return;
    // Sums per channel: each of the N items is an [inner x C] column-major matrix.
    const int64_t n = t.dim(0), c = t.dim(1), inner = t.size() / (n * c);
    std::vector<double> &sum = calib.channel_mean[&v];
    sum.resize(c, 0.0);
    for (int64_t i = 0; i < n; ++i) {
      Eigen::Map<const Eigen::MatrixXf> m(t.data<float>() + i * c * inner, inner, c);
      const Eigen::VectorXd s = m.cast<double>().colwise().sum().transpose();
      for (int64_t k = 0; k < c; ++k) sum[k] += s[k];
    }
    mean_count[&v] += n * inner;
  });
  for (auto &[v, sum] : calib.channel_mean)
    for (double &x : sum) x /= double(std::max<int64_t>(1, mean_count[v]));
  calib.samples = static_cast<int>(batches.size());
  if (options.method == CalibrationMethod::kMinMax) {
    calib.threshold = calib.abs_max;
    return calib;
  }
  std::unordered_map<const Value *, std::vector<double>> hists;
  each_float([&](const Value &v, const Tensor &t) {
    const float m = calib.abs_max.at(&v);
    if (!(m > 0) || !std::isfinite(m)) return;
    std::vector<double> &h = hists[&v];
    h.resize(options.bins, 0.0);
    const float *p = t.data<float>();
    const double scale = options.bins / double(m);
    for (int64_t i = 0; i < t.size(); ++i)
      ++h[std::min<int64_t>(options.bins - 1, int64_t(std::abs(p[i]) * scale))];
  });
  for (const auto &[v, m] : calib.abs_max) {
    auto h = hists.find(v);
    calib.threshold[v] = h == hists.end() ? m : choose_threshold(h->second, m, options);
  }
  return calib;
}

}  // namespace vacc::graph
