// Calibration methods (graph/passes/calibrate.h): each threshold is checked against what the
// samples themselves say — the sorted magnitudes for the percentile, the squared error of
// actually quantizing every sample at each power-of-two scale for mse — and the histogram
// methods' thresholds must be ones a power-of-two scale can hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/shape_inference.h"
#include "vacc/support/error.h"

using namespace vacc::graph;

namespace {

// Gaussian magnitudes with a few large outliers: what clipping calibration exists for.
std::vector<float> samples_with_outliers(int n, int outliers, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v) x = normal(rng);
  for (int i = 0; i < outliers; ++i) v[i] = 40.0f + i;
  return v;
}

std::vector<double> histogram(const std::vector<float> &v, float abs_max, int bins) {
  std::vector<double> h(bins, 0.0);
  for (float x : v) ++h[std::min<int64_t>(bins - 1, int64_t(std::abs(x) / abs_max * bins))];
  return h;
}

float abs_max_of(const std::vector<float> &v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::abs(x));
  return m;
}

// The mean squared error of quantizing every sample at f fraction bits (round half to even,
// saturate to [-128, 127]), as QuantizeLinear does.
double quantization_mse(const std::vector<float> &v, int f) {
  double err = 0;
  for (float x : v) {
    const double q = std::min(127.0, std::max(-128.0, std::nearbyint(std::ldexp(double(x), f))));
    const double d = std::ldexp(q, -f) - x;
    err += d * d;
  }
  return err / v.size();
}

TEST(Calibrate, MinMaxKeepsTheLargestMagnitude) {
  const std::vector<float> v = samples_with_outliers(10000, 3, 1);
  const float m = abs_max_of(v);
  EXPECT_EQ(choose_threshold(histogram(v, m, 2048), m, {}), m);
}

TEST(Calibrate, PercentileMatchesTheSortedMagnitudes) {
  const std::vector<float> v = samples_with_outliers(100000, 20, 2);
  const float m = abs_max_of(v);
  std::vector<float> mags(v.size());
  std::transform(v.begin(), v.end(), mags.begin(), [](float x) { return std::abs(x); });
  std::sort(mags.begin(), mags.end());
  for (double p : {99.0, 99.9, 99.99}) {
    CalibrationOptions o;
    o.method = CalibrationMethod::kPercentile;
    o.percentile = p;
    const float t = choose_threshold(histogram(v, m, 2048), m, o);
    const float want = mags[size_t(std::ceil(p / 100 * mags.size())) - 1];
    // Within one histogram bin above the exact order statistic.
    EXPECT_GE(t, want) << p;
    EXPECT_LE(t, want + m / 2048) << p;
  }
}

TEST(Calibrate, MseChoosesTheScaleWithTheLeastActualError) {
  const std::vector<float> v = samples_with_outliers(50000, 5, 3);
  const float m = abs_max_of(v);
  CalibrationOptions o;
  o.method = CalibrationMethod::kMse;
  const float t = choose_threshold(histogram(v, m, 2048), m, o);
  EXPECT_LT(t, m) << "a few far outliers: clipping them is cheaper than coarse steps";
  const int chosen = frac_bits_for(t);
  double best = INFINITY;
  for (int f = frac_bits_for(m); f <= frac_bits_for(m) + 8; ++f)
    best = std::min(best, quantization_mse(v, f));
  // The histogram's estimate may rank two neighbouring scales differently than the exact
  // error does, but never picks a scale far from the best.
  EXPECT_LE(quantization_mse(v, chosen), 1.25 * best);
  EXPECT_LT(quantization_mse(v, chosen), quantization_mse(v, frac_bits_for(m)));
}

TEST(Calibrate, EntropyClipsOutliersButNotAUniformRange) {
  const std::vector<float> v = samples_with_outliers(50000, 5, 4);
  const float m = abs_max_of(v);
  CalibrationOptions o;
  o.method = CalibrationMethod::kEntropy;
  const float t = choose_threshold(histogram(v, m, 2048), m, o);
  EXPECT_LT(t, m);
  EXPECT_GE(t, 2.0f) << "the Gaussian's body (|x| < 2 for 95 %) stays in range";
  EXPECT_EQ(std::ldexp(127.0f, -frac_bits_for(t)), t) << "a power-of-two scale's threshold";

  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> u(50000);
  for (float &x : u) x = uniform(rng);
  const float mu = abs_max_of(u);
  EXPECT_EQ(choose_threshold(histogram(u, mu, 2048), mu, o), mu)
      << "every bin is as full as the next: clipping only loses";
}

// On a graph: every float value gets a threshold no larger than its largest magnitude, and
// minmax's thresholds are those magnitudes.
TEST(Calibrate, GraphThresholdsPerMethod) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {1, 256});
  g.add_input(x);
  Value *y = g.add_value("y", DType::kFloat32, {});
  infer_node(*g.add_node(OpKind::kRelu, "relu", {x}, {y}));
  g.add_output(y);
  std::vector<std::vector<Tensor>> batches;
  std::mt19937 rng(6);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int b = 0; b < 3; ++b) {
    Tensor t(DType::kFloat32, {1, 256});
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = normal(rng);
    t.data<float>()[b] = 30.0f;  // an outlier per batch
    batches.push_back({t});
  }
  for (CalibrationMethod method : {CalibrationMethod::kMinMax, CalibrationMethod::kPercentile,
                                   CalibrationMethod::kMse, CalibrationMethod::kEntropy}) {
    CalibrationOptions o;
    o.method = method;
    o.percentile = 99.0;
    const Calibration c = calibrate(g, batches, o);
    EXPECT_EQ(c.samples, 3);
    EXPECT_FLOAT_EQ(c.abs_max.at(x), 30.0f);
    for (const Value *v : {x, y}) {
      EXPECT_GT(c.range(v), 0.0f) << calibration_method_name(method);
      EXPECT_LE(c.range(v), c.abs_max.at(v)) << calibration_method_name(method);
    }
    if (method == CalibrationMethod::kMinMax) EXPECT_EQ(c.range(y), 30.0f);
    if (method == CalibrationMethod::kPercentile) EXPECT_LT(c.range(x), 4.0f);
  }
}

TEST(Calibrate, MethodNames) {
  for (const char *name : {"minmax", "percentile", "mse", "entropy"})
    EXPECT_STREQ(calibration_method_name(calibration_method_from_name(name)), name);
}

// One test per diagnostic.
TEST(CalibrateErrors, UnknownMethod) {
  try {
    calibration_method_from_name("kl");
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_STREQ(e.what(), "--calibrate-method 'kl': choose minmax, percentile, mse or entropy");
  }
}

TEST(CalibrateErrors, PercentileOutOfRange) {
  Graph g;
  Value *x = g.add_value("x", DType::kFloat32, {1, 4});
  g.add_input(x);
  Value *y = g.add_value("y", DType::kFloat32, {});
  infer_node(*g.add_node(OpKind::kRelu, "relu", {x}, {y}));
  g.add_output(y);
  CalibrationOptions o;
  o.method = CalibrationMethod::kPercentile;
  o.percentile = 120;
  try {
    calibrate(g, {{Tensor(DType::kFloat32, {1, 4})}}, o);
    FAIL() << "no error";
  } catch (const vacc::Error &e) {
    EXPECT_NE(std::string(e.what()).find("--percentile 120: give a percentile in (0, 100]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
