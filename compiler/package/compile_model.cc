#include "vacc/package/compile_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include "vacc/graph/idx.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/passes/quantize_qdq.h"
#include "vacc/graph/pipeline.h"
#include "vacc/lower/legality.h"
#include "vacc/lower/lower_model.h"
#include "vacc/package/graph_package.h"
#include "vacc/package/quant_report.h"
#include "vacc/support/error.h"
#include "vacc/support/npy.h"

namespace vacc::package {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

graph::Shape squeezed(const graph::Shape &s) {
  graph::Shape out;
  for (int64_t d : s)
    if (d != 1) out.push_back(d);
  return out;
}

// Rows [begin, begin + count) of an [N, ...] tensor.
graph::Tensor rows(const graph::Tensor &t, int64_t begin, int64_t count) {
  graph::Shape shape = t.shape();
  shape[0] = count;
  graph::Tensor out(t.dtype(), shape);
  const int64_t row = t.nbytes() / t.dim(0);
  std::memcpy(out.raw(), t.raw() + begin * row, count * row);
  return out;
}

}  // namespace

graph::Tensor read_input_npy(const std::string &path, const graph::Shape &shape,
                             const std::string &what) {
  NpyArray a = read_npy(path);
  graph::Tensor t(graph::DType::kFloat32, shape);
  if (squeezed(a.shape) != squeezed(shape))
    fail("{}: holds an array of shape {} but {} needs {} (float32)", path,
         graph::shape_str(a.shape), what, graph::shape_str(shape));
  if (a.dtype == "f4") {
    std::memcpy(t.raw(), a.data.data(), t.nbytes());
  } else if (a.dtype == "f8") {
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = float(a.as<double>()[i]);
  } else {
    fail("{}: holds {} elements but {} needs float32 ('<f4')", path, a.dtype, what);
  }
  return t;
}

namespace {

// Batches of the graph's batch size from an .npy of samples [M, ...] (M a multiple of the
// batch; a remainder is left out). `what` names them in errors ("calibration").
std::vector<std::vector<graph::Tensor>> npy_batches(const graph::Graph &graph,
                                                    const std::string &npy_path,
                                                    const std::string &what) {
  const graph::Value *in = graph.inputs()[0];
  const graph::Shape &shape = in->shape;
  const int64_t batch = shape[0];
  std::vector<std::vector<graph::Tensor>> batches;
  NpyArray a = read_npy(npy_path);
  graph::Shape one(shape.begin() + 1, shape.end());
  graph::Shape got(a.shape.begin() + (a.shape.empty() ? 0 : 1), a.shape.end());
  if (a.dtype != "f4" || a.shape.empty() || squeezed(got) != squeezed(one))
    fail("{}: {} inputs must be float32 [M, {}] for input '{}', got {} {}", npy_path, what,
         graph::shape_str(one).substr(1, graph::shape_str(one).size() - 2), in->name, a.dtype,
         graph::shape_str(a.shape));
  if (a.shape[0] < batch)
    fail("{}: holds {} {}samples, fewer than the batch size {}", npy_path, a.shape[0],
         what == "sample" ? "" : what + " ", batch);
  graph::Tensor all(graph::DType::kFloat32, a.shape);
  std::memcpy(all.raw(), a.data.data(), all.nbytes());
  for (int64_t i = 0; i + batch <= a.shape[0]; i += batch)
    batches.push_back({rows(all, i, batch).reshaped(shape)});
  return batches;
}

void check_one_input(const graph::Graph &graph, const char *what) {
  if (graph.inputs().size() != 1)
    fail("model '{}' has {} inputs; vacc {} models with one input", graph.name,
         graph.inputs().size(), what);
  const graph::Value *in = graph.inputs()[0];
  if (in->shape.empty()) fail("model '{}': its input '{}' is a scalar", graph.name, in->name);
}

}  // namespace

std::vector<std::vector<graph::Tensor>> sample_batches(const graph::Graph &graph,
                                                       const std::string &npy_path) {
  check_one_input(graph, "runs");
  return npy_batches(graph, npy_path, "sample");
}

std::vector<std::vector<graph::Tensor>> calibration_batches(const graph::Graph &graph,
                                                            const std::string &npy_path,
                                                            std::string *source) {
  check_one_input(graph, "calibrates");
  const graph::Value *in = graph.inputs()[0];
  const graph::Shape &shape = in->shape;
  const int64_t batch = shape[0];
  std::vector<std::vector<graph::Tensor>> batches;
  if (!npy_path.empty()) {
    batches = npy_batches(graph, npy_path, "calibration");
    *source = fmt::format("{} ({} samples)", npy_path, batches.size() * batch);
    return batches;
  }
  const auto mean = graph.metadata.find("vacc.mean"), stddev = graph.metadata.find("vacc.std");
  const std::string train = std::string(graph::kFashionMnistDir) + "/train-images-idx3-ubyte.gz";
  if (mean != graph.metadata.end() && stddev != graph.metadata.end() &&
      std::filesystem::exists(train) && squeezed(shape).size() <= 3 &&
      graph::num_elements(shape) == batch * 28 * 28) {
    const graph::Tensor images = graph::read_idx(train);
    const int64_t count = batch * std::max<int64_t>(1, 500 / batch);
    const graph::Tensor x = graph::normalize_images(rows(images, 0, count), std::stof(mean->second),
                                                    std::stof(stddev->second));
    for (int64_t i = 0; i + batch <= count; i += batch)
      batches.push_back({rows(x, i, batch).reshaped(shape)});
    *source = fmt::format("{} training images of {}", count, graph::kFashionMnistDir);
    return batches;
  }
  std::mt19937 rng(0);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int b = 0; b < 4; ++b) {
    graph::Tensor t(graph::DType::kFloat32, shape);
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = normal(rng);
    batches.push_back({std::move(t)});
  }
  *source = "4 batches of seeded standard-normal noise (pass --calibration X.npy for real data)";
  return batches;
}

graph::Graph import_model(const std::string &onnx_path, const CompileOptions &options) {
  graph::ImportOptions io;
  io.dims["N"] = options.batch;
  io.batch = options.batch;
  io.input_shape = options.input_shape;
  io.bind_hint =
      "give the model's input with --input X.npy, whose shape binds every dimension (--batch N "
      "binds dimension 0)";
  graph::Graph g = graph::import_onnx(onnx_path, io);
  if (g.name.empty()) g.name = std::filesystem::path(onnx_path).stem().string();
  return g;
}

CompiledModel compile_model(const std::string &onnx_path, const isa::HwConfig &config,
                            const CompileOptions &options) {
  CompiledModel result;
  const auto start = Clock::now();
  auto stage = [&](const std::string &name, Clock::time_point t0, std::string summary) {
    result.stages.push_back({name, ms_since(t0), summary});
    if (options.log)
      options.log(
          fmt::format("{:<16} {:8.1f} ms  {}", name, result.stages.back().milliseconds, summary));
  };

  auto t0 = Clock::now();
  graph::Graph g = import_model(onnx_path, options);
  stage("import", t0, fmt::format("{} nodes from {}", g.num_nodes(), onnx_path));

  std::vector<std::vector<graph::Tensor>> calib;
  if (options.quantize && graph::has_qdq(g)) {
    // Quantized by its author: the model's own scales, nothing to calibrate.
    if (!options.calibration.empty() ||
        options.calibration_options.method != graph::CalibrationMethod::kMinMax)
      fail(
          "{}: the model is quantized already (QuantizeLinear/DequantizeLinear) and runs with "
          "its own scales; drop --calibration and --calibrate-method",
          onnx_path);
    result.calibration_source = "none: the model's own scales (QuantizeLinear/DequantizeLinear)";
    stage("calibration data", Clock::now(), result.calibration_source);
  } else if (options.quantize) {
    t0 = Clock::now();
    calib = calibration_batches(g, options.calibration, &result.calibration_source);
    stage("calibration data", t0, result.calibration_source);
  }
  graph::QuantizeOptions qo = options.quantize_options;
  if (options.quantize && options.max_layer_loss_db && !calib.empty()) {
    // The layers that lose most stay in float on the CPU (quant_report.h).
    t0 = Clock::now();
    qo.keep_float = layers_kept_float(onnx_path, config, options);
    std::vector<std::string> names(qo.keep_float.begin(), qo.keep_float.end());
    std::sort(names.begin(), names.end());
    stage("max_layer_loss", t0,
          fmt::format("{} layer{} below {} dB SQNR kept in float{}{}", names.size(),
                      names.size() == 1 ? "" : "s", *options.max_layer_loss_db,
                      names.empty() ? "" : ": ", fmt::join(names, ", ")));
  }

  graph::PipelineOptions po;
  po.quantize = options.quantize;
  po.calibration = options.calibration_options;
  po.quantize_options = qo;
  po.accel_legality = lower::accel_legality(config, options.vthreads);
  po.fold_windows = lower::window_folding(config, options.vthreads);
  po.fuse_residual_adds = po.accel_legality;
  po.cpu_block = options.cpu_block;
  po.fuse_pools = po.accel_legality;
  if (!options.dump_dir.empty()) po.dump_dir = options.dump_dir + "/graph";
  po.log = options.log;
  graph::PipelineResult pr = graph::run_graph_pipeline(g, config, calib, po);
  for (const auto &p : pr.passes) result.stages.push_back({p.name, p.milliseconds, p.summary});

  t0 = Clock::now();
  isa::Package package = package_graph(g, pr.memory, config);
  package.model = std::filesystem::path(onnx_path).filename().string();
  stage("package", t0,
        fmt::format("{} steps, {} tensors, arena {} bytes", package.steps.size(),
                    package.tensors.size(), package.arena_bytes));

  t0 = Clock::now();
  lower::ModelLowerOptions lo;
  lo.vthreads = options.vthreads;
  if (!options.dump_dir.empty()) lo.dump_dir = options.dump_dir + "/layers";
  lo.log = options.log ? [&](const std::string &line) { options.log("  " + line); }
                       : std::function<void(const std::string &)>();
  const int lowered = lower::lower_model(g, config, package, lo);
  stage("lower_accel", t0, fmt::format("{} accelerator layers compiled", lowered));
  package.validate(onnx_path);
  result.package = std::move(package);
  result.seconds = ms_since(start) / 1000.0;
  return result;
}

}  // namespace vacc::package
