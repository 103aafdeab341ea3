#include "vacc/package/quant_report.h"

#include <fmt/format.h>

#include "vacc/graph/passes/quantize_qdq.h"
#include "vacc/graph/pipeline.h"
#include "vacc/support/error.h"

namespace vacc::package {

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

ModelQuantReport report(const std::string &onnx_path, const isa::HwConfig &config,
                        const CompileOptions &options, const std::string &inputs_npy,
                        const std::vector<std::vector<graph::Tensor>> *given) {
  graph::Graph fg = import_model(onnx_path, options);
  if (graph::has_qdq(fg))
    fail(
        "{}: the model is quantized already (QuantizeLinear/DequantizeLinear) and runs with its "
        "own scales; quant-report compares vacc's own quantization with the float model: give "
        "the float model",
        onnx_path);
  ModelQuantReport r;
  const std::vector<std::vector<graph::Tensor>> calib =
      calibration_batches(fg, options.calibration, &r.calibration_source);
  std::vector<std::vector<graph::Tensor>> inputs;
  if (given) {
    inputs = *given;
    r.input_source =
        fmt::format("{} given input batch{}", inputs.size(), inputs.size() == 1 ? "" : "es");
  } else if (!inputs_npy.empty()) {
    inputs = sample_batches(fg, inputs_npy);
    r.input_source = fmt::format("{} ({} batches)", inputs_npy, inputs.size());
  } else {
    inputs = calib;
    r.input_source = "the calibration inputs";
  }
  graph::Graph qg = import_model(onnx_path, options);
  prepare(fg, config, options, {}, "recognize_gelu");
  const graph::PipelineResult qr = prepare(qg, config, options, calib, "quantize");
  r.report = graph::quant_report(fg, qg, qr.int8_forms, inputs);
  return r;
}

}  // namespace

ModelQuantReport quant_report(const std::string &onnx_path, const isa::HwConfig &config,
                              const CompileOptions &options, const std::string &inputs_npy) {
  return report(onnx_path, config, options, inputs_npy, nullptr);
}

ModelQuantReport quant_report(const std::string &onnx_path, const isa::HwConfig &config,
                              const CompileOptions &options,
                              const std::vector<std::vector<graph::Tensor>> &inputs) {
  return report(onnx_path, config, options, "", &inputs);
}

}  // namespace vacc::package
