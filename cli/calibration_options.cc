#include "vacc/cli/calibration_options.h"

#include "vacc/support/error.h"

namespace vacc::cli {

void add_calibration_options(CLI::App *cmd, CalibrationArgs *args, const std::string &what) {
  cmd->add_option("--calibration", args->npy,
                  (what.empty() ? "Calibration inputs" : what + "calibration inputs") +
                      " (.npy, float32 [M, ...]); default: Fashion-MNIST training images for the "
                      "bundled model, else seeded noise");
  cmd->add_option("--calibrate-method", args->method,
                  "How each activation's int8 range is chosen from the calibration runs: minmax "
                  "(largest magnitude), percentile (--percentile of the magnitudes), mse (least "
                  "squared error) or entropy (least KL divergence)")
      ->capture_default_str();
  cmd->add_option("--percentile", args->percentile,
                  "--calibrate-method percentile: the percentile of magnitudes kept (default "
                  "99.99)");
}

void apply_calibration_options(const CalibrationArgs &args, package::CompileOptions *options) {
  options->calibration = args.npy;
  graph::CalibrationOptions &c = options->calibration_options;
  c.method = graph::calibration_method_from_name(args.method);
  if (args.percentile != 0) {
    if (c.method != graph::CalibrationMethod::kPercentile)
      fail("--percentile {} needs --calibrate-method percentile (the method is {})",
           args.percentile, args.method);
    if (!(args.percentile > 0 && args.percentile <= 100))
      fail("--percentile {}: give a percentile in (0, 100], e.g. 99.99", args.percentile);
    c.percentile = args.percentile;
  }
}

}  // namespace vacc::cli
