// What int8 quantization costs, layer by layer (`vacc quant-report`, docs/quantization.md).
//
// A layer is a float operator whose output has an int8 form (passes/quantize.h: Int8Forms),
// together with the activations and int8 pass-through operators that alone read it (Conv,
// Relu and MaxPool are one layer: the int8 value after them is what the model stores). For
// each layer, over the given inputs:
//   - sqnr_local:   the signal-to-quantization-noise ratio (dB) of its int8 output against the
//                   float model's, with everything before it in float: its inputs are the float
//                   model's values quantized at the scales the int8 graph reads them at, so that
//                   it measures the noise this layer itself adds (weights, rounding, clipping);
//   - sqnr_chained: the same with everything before it in int8 (the int8 graph as it runs);
//   - the float output's range, the largest magnitude its int8 form holds (127 * 2^-f), and the
//     share of float values beyond the int8 range (clipped);
//   - for a convolution or dense layer, its weights' largest magnitude per output channel
//     (smallest, median, largest over the channels) and the fraction bits they get.
// SQNR = 10 log10(sum f^2 / sum (f - q)^2), f the float values, q the int8 form's real values;
// +infinity where they are equal.
#pragma once

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/quantize.h"

namespace vacc::graph {

struct WeightRange {
  int64_t channels = 0;
  float min = 0, median = 0, max = 0;        // over the channels, of each channel's largest |w|
  int frac_bits_min = 0, frac_bits_max = 0;  // the per-channel fraction bits (frac_bits_for)
};

struct LayerQuantStats {
  std::string name;   // the layer's first node ("conv1"), or the graph input's name
  std::string ops;    // its operators, "Conv+Relu+MaxPool" ("input" for a graph input)
  std::string value;  // the float value compared (the layer's last)
  double sqnr_local = 0, sqnr_chained = 0;  // dB
  float min = 0, max = 0;                   // the float output's range over the inputs
  int frac_bits = 0;                        // of its int8 form
  int zero_point = 0;                       // of its int8 form (-128: unsigned levels)
  float int8_max = 0;                       // (127 - zero_point) * 2^-frac_bits
  double clipped = 0;    // share of float values outside [-128.5, 127.5] * 2^-frac_bits
  int64_t elements = 0;  // values compared, over all inputs
  std::optional<WeightRange> weights;
  // A layer left in float (QuantizeOptions::keep_float): it adds no noise (its SQNRs are
  // +infinity); the next layer reads its output quantized.
  bool kept_float = false;
};

struct QuantReport {
  std::vector<LayerQuantStats> layers;  // in graph order
  // Indices into `layers`, the most costly first: ascending sqnr_local, the noise each layer
  // adds by itself (ties by sqnr_chained).
  std::vector<size_t> ranking;
  std::vector<double> output_sqnr;    // per graph output, over the inputs (dB)
  std::vector<double> output_cosine;  // per graph output, over the inputs
  int inputs = 0;                     // input batches run
};

// `float_graph` is the graph `int8_graph` was quantized from (the same passes before
// calibrate, so that values have the same names), `forms` quantize's int8 forms in
// `int8_graph`; `inputs` one input list per run; `kept_float` the nodes quantize left in float
// on purpose (each gets a row). Throws vacc::Error when there is no input.
QuantReport quant_report(const Graph &float_graph, const Graph &int8_graph, const Int8Forms &forms,
                         const std::vector<std::vector<Tensor>> &inputs,
                         const std::unordered_set<std::string> &kept_float = {});

// 10 log10(signal / noise); +infinity for noise 0 (and signal > 0 or not).
double sqnr_db(double signal, double noise);

}  // namespace vacc::graph
