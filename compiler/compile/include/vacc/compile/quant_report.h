// `vacc quant-report`: the model compiled as `vacc compile` compiles it (graph/pipeline.h), up
// to its float graph (as calibrate reads it) and its int8 graph (right after quantize), both
// run on the same inputs and compared layer by layer (graph/quant_report.h).
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "vacc/compile/compile_model.h"
#include "vacc/graph/quant_report.h"
#include "vacc/isa/config.h"

namespace vacc::compile {

struct ModelQuantReport {
  graph::QuantReport report;
  std::string calibration_source;  // where the calibration inputs came from
  std::string input_source;        // where the compared inputs came from
};

// Compares on `inputs_npy`'s samples ([M, ...]), or on the calibration inputs when it is "",
// with the layers layers_kept_float() names in float (each stated in the report).
// A model quantized by its author (QDQ) is refused: it has no float form to compare with.
ModelQuantReport quant_report(const std::string &onnx_path, const isa::HwConfig &config,
                              const CompileOptions &options, const std::string &inputs_npy);

// The layers compile_model leaves in float: options.quantize_options.keep_float, and with
// options.max_layer_loss_db those whose int8 output, with float inputs, has a lower SQNR on the
// calibration inputs.
std::unordered_set<std::string> layers_kept_float(const std::string &onnx_path,
                                                  const isa::HwConfig &config,
                                                  const CompileOptions &options);

// The same on the given input batches (each as ReferenceExecutor::run takes it).
ModelQuantReport quant_report(const std::string &onnx_path, const isa::HwConfig &config,
                              const CompileOptions &options,
                              const std::vector<std::vector<graph::Tensor>> &inputs);

}  // namespace vacc::compile
