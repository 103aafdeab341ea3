// `vacc quant-report MODEL.onnx [--calibration X.npy] [--input Y.npy]`: what int8 costs, layer
// by layer (graph/quant_report.h): each layer's SQNR against float with everything before it
// in float and in int8, its activation range and clipped share, its weights' range per
// channel, and the layers ranked by the noise they add; as text, --json, or an HTML page with
// a plot (--html FILE).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "commands.h"
#include "quant_report_output.h"
#include "vacc/cli/calibration_options.h"
#include "vacc/cli/output.h"
#include "vacc/compile/quant_report.h"
#include "vacc/support/error.h"
#include "vacc/support/file.h"

namespace vacc::cli {

void add_quant_report_command(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "quant-report", "Per-layer cost of int8 quantization against the float model (SQNR)");
  struct Args {
    std::string model, config = "default", input, html;
    CalibrationArgs calibration;
    int64_t batch = 1;
    size_t top = 5;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("model", a->model, "ONNX model (.onnx, float)")->required();
  add_calibration_options(cmd, &a->calibration);
  cmd->add_option("--input", a->input,
                  "Inputs to compare on (.npy, float32 [M, ...]); default: the calibration "
                  "inputs");
  cmd->add_option("--config", a->config, "Hardware config (YAML path or bundled name)")
      ->capture_default_str();
  cmd->add_option("--batch", a->batch, "Value of the model's batch dimension")
      ->capture_default_str();
  cmd->add_option("--top", a->top, "How many of the most costly layers to list")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print JSON instead of text");
  cmd->add_option("--html", a->html, "Also write an HTML page with a plot (self-contained)");
  cmd->callback([a] {
    const isa::HwConfig config = load_named_config(a->config);
    if (!path_exists(a->model)) fail("{}: no such model file", a->model);
    if (std::filesystem::path(a->model).extension() != ".onnx")
      fail("{}: vacc quant-report takes a float ONNX model (.onnx)", a->model);
    if (a->batch < 1) fail("--batch {}: must be at least 1", a->batch);
    compile::CompileOptions o;
    o.batch = a->batch;
    apply_calibration_options(a->calibration, &o);
    const compile::ModelQuantReport m = compile::quant_report(a->model, config, o, a->input);
    const QuantReportHeader h{a->model, m.calibration_source,
                              graph::calibration_method_name(o.calibration_options.method),
                              m.input_source};
    if (!a->html.empty()) {
      std::ofstream out(a->html);
      out << quant_report_html(h, m.report);
      if (!out) fail("{}: cannot write the HTML report", a->html);
    }
    if (a->json) {
      fmt::print("{}\n", quant_report_json(h, m.report).dump(2));
      return;
    }
    fmt::print("{}", quant_report_text(h, m.report, a->top));
    if (!a->html.empty()) fmt::print("wrote {}\n", a->html);
  });
}

}  // namespace vacc::cli
