// Calibration for int8 quantization: runs the float graph on sample inputs with the
// reference executor and chooses, for every float value, the magnitude its int8 form must
// hold (its clip threshold; docs/quantization.md).
//
// Methods (as TensorRT's and PyTorch's calibrators name them), all symmetric, each choosing
// among the thresholds a power-of-two scale can have (127 * 2^-f):
//   minmax      the largest magnitude seen (nothing clipped)
//   percentile  the given percentile of the magnitudes (e.g. 99.99)
//   mse         the scale with the least expected squared quantization error (rounding
//               inside the range, clipping outside) over the magnitudes' histogram
//   entropy     the scale whose 128-level quantized histogram has the least KL divergence
//               from the histogram clipped at its threshold (TensorRT's entropy calibrator)
// The histogram methods run the graph twice over the batches: once for the largest magnitude
// (which fixes each histogram's range), once to fill the histograms.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "vacc/graph/graph.h"

namespace vacc::graph {

enum class CalibrationMethod { kMinMax, kPercentile, kMse, kEntropy };

struct CalibrationOptions {
  // minmax by default. mse gives int8 outputs closer to the float model's on ResNet-18,
  // ResNet-50, MobileNetV2 and GoogLeNet (bench/RESULTS.md, "mse against minmax") but turns a
  // near tie of the fidelity test's ResNet-18 into a tie at the output's resolution.
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.99;  // kPercentile: in (0, 100]
  int bins = 2048;            // histogram bins over [0, largest magnitude]
};

// The method named `name` (minmax, percentile, mse, entropy); a vacc::Error naming `option`
// and the choices otherwise.
CalibrationMethod calibration_method_from_name(const std::string &name,
                                               const std::string &option = "--calibrate-method");
const char *calibration_method_name(CalibrationMethod method);

// How many of the batches channel means are taken over: bias correction runs the int8 graph
// on as many, holding all of their values at once.
constexpr size_t kChannelMeanBatches = 32;

struct Calibration {
  std::unordered_map<const Value *, float> abs_max;    // the largest magnitude seen
  std::unordered_map<const Value *, float> threshold;  // the method's choice (<= abs_max)
  // The mean of each channel (dimension 1) of every float value of rank >= 2 over the first
  // kChannelMeanBatches batches (bias correction's reference: passes/correct_bias.h).
  std::unordered_map<const Value *, std::vector<double>> channel_mean;
  int samples = 0;  // number of input batches seen
  CalibrationMethod method = CalibrationMethod::kMinMax;
  float range(const Value *v) const;  // the threshold; 0 when never seen
};

// `batches` holds one input list per run (each as ReferenceExecutor::run takes it). Throws
// vacc::Error when there is no batch, a batch does not fit the graph's inputs, or the
// options are out of range.
Calibration calibrate(const Graph &graph, const std::vector<std::vector<Tensor>> &batches,
                      const CalibrationOptions &options = {});

// The threshold `method` chooses for a histogram `hist` of magnitudes over [0, abs_max]
// (equal bins). Exposed for tests.
float choose_threshold(const std::vector<double> &hist, float abs_max,
                       const CalibrationOptions &options);

}  // namespace vacc::graph
