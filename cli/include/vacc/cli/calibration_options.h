// The calibration options of every command that compiles a model (compile, run, bench model,
// eval): the inputs (--calibration), the method (--calibrate-method) and its percentile, and
// bias correction from the calibration data (--bias-correction), and the layers kept in float
// (--keep-float, --max-layer-loss).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "vacc/compile/compile_model.h"

namespace vacc::cli {

struct CalibrationArgs {
  std::string npy;  // --calibration
  std::string method;  // --calibrate-method; "" not given (graph::CalibrationOptions' default)
  double percentile = 0;                // 0: not given (the method's default)
  std::string bias_correction = "off";  // --bias-correction on|off
  std::string align_scales = "off";     // --align-scales on|off
  std::string equalize = "off";         // --equalize on|off
  std::string unsigned_activations = "on";  // --unsigned-activations on|off
  std::string weight_scales = "pow2";       // --weight-scales pow2|exact
  std::string rounding = "nearest";         // --rounding nearest|hessian|learned
  std::string rounding_seconds;             // --rounding-seconds S; "" not given
  std::vector<std::string> keep_float;  // --keep-float LAYER,...
  std::string max_layer_loss;           // --max-layer-loss DB; "" not given
};

// Adds --calibration, --calibrate-method and --percentile to `cmd`; `what` prefixes the
// --calibration help (e.g. ".onnx models: ").
void add_calibration_options(CLI::App *cmd, CalibrationArgs *args, const std::string &what = "");

// Sets the calibration inputs and options of `options`; a vacc::Error for an unknown method,
// or a --percentile without --calibrate-method percentile.
void apply_calibration_options(const CalibrationArgs &args, compile::CompileOptions *options);

}  // namespace vacc::cli
