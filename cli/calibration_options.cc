#include "vacc/cli/calibration_options.h"

#include <cmath>
#include <optional>
#include <stdexcept>

#include "vacc/support/error.h"

namespace vacc::cli {

namespace {

// A finite number above 0 spelled whole by `text`; nullopt otherwise.
std::optional<double> parse_positive(const std::string &text) {
  double value = 0;
  size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception &) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(value) || value <= 0) return std::nullopt;
  return value;
}

}  // namespace

void add_calibration_options(CLI::App *cmd, CalibrationArgs *args, const std::string &what) {
  cmd->add_option("--calibration", args->npy,
                  (what.empty() ? "Calibration inputs" : what + "calibration inputs") +
                      " (.npy, float32 [M, ...]); default: Fashion-MNIST training images for the "
                      "bundled model, else seeded noise");
  cmd->add_option("--calibrate-method", args->method,
                  "How each activation's int8 range is chosen from the calibration runs: minmax "
                  "(largest magnitude; the default), percentile (--percentile of the magnitudes), "
                  "mse (least squared error) or entropy (least KL divergence)");
  cmd->add_option("--percentile", args->percentile,
                  "--calibrate-method percentile: the percentile of magnitudes kept (default "
                  "99.99)");
  cmd->add_option("--bias-correction", args->bias_correction,
                  "on: correct each layer's int32 bias so that its channels' means match the "
                  "float model's on the calibration data (docs/quantization.md)")
      ->capture_default_str();
  cmd->add_option("--align-scales", args->align_scales,
                  "on: rescale each convolution or dense layer whose output only reaches other "
                  "such layers (through Relu, Clip, pools) so that its stored range fills its "
                  "power-of-two int8 grid (docs/quantization.md)")
      ->capture_default_str();
  cmd->add_option("--equalize", args->equalize,
                  "on: balance the output channels of each convolution or dense layer whose "
                  "output only reaches other such layers (through Relu, pools) against the "
                  "weights that read them (cross-layer equalization; docs/quantization.md)")
      ->capture_default_str();
  cmd->add_option("--unsigned-activations", args->unsigned_activations,
                  "on: store each Relu or ReLU6 output that only unpadded convolutions and dense "
                  "layers read as unsigned levels (zero point -128, one bit finer; "
                  "docs/quantization.md); off: every activation symmetric")
      ->capture_default_str();
  cmd->add_option("--weight-scales", args->weight_scales,
                  "pow2: each output channel's weights on a power-of-two grid (requantization is "
                  "a shift); exact: on the grid its largest magnitude fills, the requantization "
                  "multiplying by a per-channel 16-bit multiplier on the ALU (finer weights, "
                  "more ALU cycles per output tile; docs/quantization.md)")
      ->capture_default_str();
  cmd->add_option("--rounding", args->rounding,
                  "How weights take their int8 levels: nearest, hessian (each layer's "
                  "rounding errors fed back onto its other weights through its inputs' Hessian on "
                  "the calibration data, as GPTQ) or learned (each weight's level below or above "
                  "learned by descent on its layer's output error, as AdaRound; "
                  "docs/quantization.md)")
      ->capture_default_str();
  cmd->add_option("--rounding-seconds", args->rounding_seconds,
                  "--rounding learned: the whole model's optimization within S seconds of "
                  "nominal compute (a fixed rate, so the package is the same on every machine; "
                  "layers past it are rounded with their Hessians); default 60");
  cmd->add_option("--keep-float", args->keep_float,
                  "Layers to leave in float on the CPU, by name as `vacc quant-report` lists them "
                  "(comma-separated)")
      ->delimiter(',');
  cmd->add_option("--max-layer-loss", args->max_layer_loss,
                  "Keep in float on the CPU every layer whose int8 output, with float inputs, "
                  "has an SQNR below DB decibels on the calibration inputs (as `vacc "
                  "quant-report` measures it), e.g. 30");
}

void apply_calibration_options(const CalibrationArgs &args, compile::CompileOptions *options) {
  options->calibration = args.npy;
  graph::CalibrationOptions &c = options->calibration_options;
  if (!args.method.empty()) {
    c.method = graph::calibration_method_from_name(args.method);
    options->calibration_method_given = true;
  }
  if (args.bias_correction != "on" && args.bias_correction != "off")
    fail("--bias-correction '{}': choose on or off", args.bias_correction);
  options->quantize_options.correct_bias = args.bias_correction == "on";
  if (args.align_scales != "on" && args.align_scales != "off")
    fail("--align-scales '{}': choose on or off", args.align_scales);
  options->quantize_options.align_scales = args.align_scales == "on";
  if (args.equalize != "on" && args.equalize != "off")
    fail("--equalize '{}': choose on or off", args.equalize);
  options->quantize_options.equalize_channels = args.equalize == "on";
  if (args.unsigned_activations != "on" && args.unsigned_activations != "off")
    fail("--unsigned-activations '{}': choose on or off", args.unsigned_activations);
  options->quantize_options.unsigned_activations = args.unsigned_activations == "on";
  if (args.weight_scales != "pow2" && args.weight_scales != "exact")
    fail("--weight-scales '{}': choose pow2 or exact", args.weight_scales);
  options->quantize_options.exact_weight_scales = args.weight_scales == "exact";
  using Rounding = graph::QuantizeOptions::Rounding;
  if (args.rounding == "nearest")
    options->quantize_options.rounding = Rounding::kNearest;
  else if (args.rounding == "hessian")
    options->quantize_options.rounding = Rounding::kHessian;
  else if (args.rounding == "learned")
    options->quantize_options.rounding = Rounding::kLearned;
  else
    fail("--rounding '{}': choose nearest, hessian or learned", args.rounding);
  if (!args.rounding_seconds.empty()) {
    const std::optional<double> s = parse_positive(args.rounding_seconds);
    if (!s)
      fail("--rounding-seconds '{}': give the learned rounding's time in seconds above 0 (e.g. 60)",
           args.rounding_seconds);
    if (args.rounding != "learned")
      fail("--rounding-seconds {} needs --rounding learned (the rounding is {})",
           args.rounding_seconds, args.rounding);
    options->quantize_options.rounding_seconds = *s;
  }
  for (const std::string &name : args.keep_float)
    if (!name.empty()) options->quantize_options.keep_float.insert(name);
  if (!args.max_layer_loss.empty()) {
    const std::optional<double> db = parse_positive(args.max_layer_loss);
    if (!db)
      fail(
          "--max-layer-loss '{}': give the lowest SQNR a layer may keep, in dB above 0 (e.g. "
          "30); `vacc quant-report` shows each layer's",
          args.max_layer_loss);
    options->max_layer_loss_db = *db;
  }
  if (args.percentile != 0) {
    if (c.method != graph::CalibrationMethod::kPercentile)
      fail("--percentile {} needs --calibrate-method percentile (the method is {})",
           args.percentile, graph::calibration_method_name(c.method));
    if (!(args.percentile > 0 && args.percentile <= 100))
      fail("--percentile {}: give a percentile in (0, 100], e.g. 99.99", args.percentile);
    c.percentile = args.percentile;
  }
}

}  // namespace vacc::cli
