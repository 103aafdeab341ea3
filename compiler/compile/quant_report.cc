#include "vacc/compile/quant_report.h"

#include <fmt/format.h>

#include <unordered_set>

#include "vacc/graph/passes/quantize_qdq.h"
#include "vacc/graph/pipeline.h"
#include "vacc/support/error.h"

namespace vacc::compile {

namespace {

// The model through the graph pipeline up to pass `stop_after`, as compile_model runs it.
graph::PipelineResult prepare(graph::Graph &g, const isa::HwConfig &config,
                              const CompileOptions &options,
                              const std::vector<std::vector<graph::Tensor>> &calib,
                              const std::string &stop_after) {
  graph::PipelineOptions po;
  po.quantize = true;
  po.calibration = options.calibration_options;
  po.quantize_options = options.quantize_options;
  po.stop_after = stop_after;
  return graph::run_graph_pipeline(g, config, calib, po);
}

// The report with the layers in `kept` left in float.
graph::QuantReport compare(const std::string &onnx_path, const isa::HwConfig &config,
                           CompileOptions options,
                           const std::vector<std::vector<graph::Tensor>> &calib,
                           const std::vector<std::vector<graph::Tensor>> &inputs,
                           const std::unordered_set<std::string> &kept) {
  options.quantize_options.keep_float = kept;
  graph::Graph fg = import_model(onnx_path, options), qg = import_model(onnx_path, options);
  // The float graph as quantize reads it: rescaled by align_scales when that runs.
  if (options.quantize_options.align_scales)
    prepare(fg, config, options, calib, "align_scales");
  else
    prepare(fg, config, options, {}, "recognize_gelu");
  // The int8 graph as the last quantizing pass leaves it (correct_bias runs only when asked).
  const graph::PipelineResult qr =
      prepare(qg, config, options, calib,
              options.quantize_options.correct_bias ? "correct_bias" : "quantize");
  return graph::quant_report(fg, qg, qr.int8_forms, inputs, kept);
}

// The layers --max-layer-loss keeps in float: those of `r` whose SQNR with float inputs is
// below the bound (a graph input cannot be).
std::unordered_set<std::string> below(const graph::QuantReport &r, double min_sqnr_db) {
  std::unordered_set<std::string> out;
  for (const graph::LayerQuantStats &l : r.layers)
    if (!l.kept_float && l.ops != "input" && l.sqnr_local < min_sqnr_db) out.insert(l.name);
  return out;
}

ModelQuantReport report(const std::string &onnx_path, const isa::HwConfig &config,
                        const CompileOptions &options, const std::string &inputs_npy,
                        const std::vector<std::vector<graph::Tensor>> *given) {
  graph::Graph g = import_model(onnx_path, options);
  if (graph::has_qdq(g))
    fail(
        "{}: the model is quantized already (QuantizeLinear/DequantizeLinear) and runs with its "
        "own scales; quant-report compares vacc's own quantization with the float model: give "
        "the float model",
        onnx_path);
  ModelQuantReport r;
  const std::vector<std::vector<graph::Tensor>> calib =
      calibration_batches(g, options.calibration, &r.calibration_source);
  std::vector<std::vector<graph::Tensor>> inputs;
  if (given) {
    inputs = *given;
    r.input_source =
        fmt::format("{} given input batch{}", inputs.size(), inputs.size() == 1 ? "" : "es");
  } else if (!inputs_npy.empty()) {
    inputs = sample_batches(g, inputs_npy);
    r.input_source = fmt::format("{} ({} batches)", inputs_npy, inputs.size());
  } else {
    inputs = calib;
    r.input_source = "the calibration inputs";
  }
  std::unordered_set<std::string> kept = options.quantize_options.keep_float;
  if (options.max_layer_loss_db) {
    // Each layer's SQNR with float inputs does not depend on which others stay float: the
    // layers below the bound on the calibration inputs, as compile_model chooses them.
    for (const std::string &name :
         below(compare(onnx_path, config, options, calib, calib, kept), *options.max_layer_loss_db))
      kept.insert(name);
  }
  r.report = compare(onnx_path, config, options, calib, inputs, kept);
  return r;
}

}  // namespace

std::unordered_set<std::string> layers_kept_float(const std::string &onnx_path,
                                                  const isa::HwConfig &config,
                                                  const CompileOptions &options) {
  std::unordered_set<std::string> kept = options.quantize_options.keep_float;
  if (!options.max_layer_loss_db) return kept;
  graph::Graph g = import_model(onnx_path, options);
  std::string source;
  const std::vector<std::vector<graph::Tensor>> calib =
      calibration_batches(g, options.calibration, &source);
  for (const std::string &name :
       below(compare(onnx_path, config, options, calib, calib, kept), *options.max_layer_loss_db))
    kept.insert(name);
  return kept;
}

ModelQuantReport quant_report(const std::string &onnx_path, const isa::HwConfig &config,
                              const CompileOptions &options, const std::string &inputs_npy) {
  return report(onnx_path, config, options, inputs_npy, nullptr);
}

ModelQuantReport quant_report(const std::string &onnx_path, const isa::HwConfig &config,
                              const CompileOptions &options,
                              const std::vector<std::vector<graph::Tensor>> &inputs) {
  return report(onnx_path, config, options, "", &inputs);
}

}  // namespace vacc::compile
