#include "vacc/compile/compile_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>

#include "vacc/compile/graph_package.h"
#include "vacc/compile/quant_report.h"
#include "vacc/graph/idx.h"
#include "vacc/graph/onnx_import.h"
#include "vacc/graph/passes/quantize_qdq.h"
#include "vacc/graph/pipeline.h"
#include "vacc/lower/join_programs.h"
#include "vacc/lower/legality.h"
#include "vacc/lower/lower_model.h"
#include "vacc/support/error.h"
#include "vacc/support/npy.h"
#include "vacc/tuning/tuning_db.h"

namespace vacc::compile {

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

void check_input_array(const std::string &source, const std::string &dtype,
                       const graph::Shape &array_shape, const graph::Shape &shape,
                       const std::string &what) {
  if (squeezed(array_shape) != squeezed(shape))
    fail("{}: holds an array of shape {} but {} needs {} (float32)", source,
         graph::shape_str(array_shape), what, graph::shape_str(shape));
  if (dtype != "f4" && dtype != "f8")
    fail("{}: holds {} elements but {} needs float32 ('<f4')", source, dtype, what);
}

graph::Tensor read_input_npy(const std::string &path, const graph::Shape &shape,
                             const std::string &what) {
  NpyArray a = read_npy(path);
  check_input_array(path, a.dtype, a.shape, shape, what);
  graph::Tensor t(graph::DType::kFloat32, shape);
  if (a.dtype == "f4") {
    std::memcpy(t.raw(), a.data.data(), t.nbytes());
  } else {
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = float(a.as<double>()[i]);
  }
  return t;
}

namespace {

// The graph's one input, which calibration feeds.
const graph::Value &calibrated_input(const graph::Graph &graph) {
  if (graph.inputs().size() != 1)
    fail("model '{}' has {} inputs; vacc calibrates models with one input", graph.name,
         graph.inputs().size());
  const graph::Value *in = graph.inputs()[0];
  if (in->shape.empty()) fail("model '{}': its input '{}' is a scalar", graph.name, in->name);
  return *in;
}

}  // namespace

std::vector<std::vector<graph::Tensor>> calibration_batches(const graph::Graph &graph,
                                                            const NpyArray &a,
                                                            const std::string &name,
                                                            std::string *source) {
  const graph::Value *in = &calibrated_input(graph);
  const graph::Shape &shape = in->shape;
  const int64_t batch = shape[0];
  std::vector<std::vector<graph::Tensor>> batches;
  graph::Shape one(shape.begin() + 1, shape.end());
  graph::Shape got(a.shape.begin() + (a.shape.empty() ? 0 : 1), a.shape.end());
  if (a.dtype != "f4" || a.shape.empty() || squeezed(got) != squeezed(one))
    fail("{}: calibration inputs must be float32 [M, {}] for input '{}', got {} {}", name,
         graph::shape_str(one).substr(1, graph::shape_str(one).size() - 2), in->name, a.dtype,
         graph::shape_str(a.shape));
  if (a.shape[0] < batch)
    fail("{}: holds {} calibration samples, fewer than the batch size {}", name, a.shape[0], batch);
  graph::Tensor all(graph::DType::kFloat32, a.shape);
  std::memcpy(all.raw(), a.data.data(), all.nbytes());
  for (int64_t i = 0; i + batch <= a.shape[0]; i += batch)
    batches.push_back({rows(all, i, batch).reshaped(shape)});
  *source = fmt::format("{} ({} samples)", name, batches.size() * batch);
  return batches;
}

std::vector<std::vector<graph::Tensor>> sample_batches(const graph::Graph &graph,
                                                       const std::string &npy_path) {
  const graph::Value *in = graph.inputs().size() == 1 ? graph.inputs()[0] : nullptr;
  if (!in)
    fail("model '{}' has {} inputs; vacc runs models with one input", graph.name,
         graph.inputs().size());
  if (in->shape.empty()) fail("model '{}': its input '{}' is a scalar", graph.name, in->name);
  const graph::Shape &shape = in->shape;
  const int64_t batch = shape[0];
  const NpyArray a = read_npy(npy_path);
  graph::Shape one(shape.begin() + 1, shape.end());
  graph::Shape got(a.shape.begin() + (a.shape.empty() ? 0 : 1), a.shape.end());
  if (a.dtype != "f4" || a.shape.empty() || squeezed(got) != squeezed(one))
    fail("{}: sample inputs must be float32 [M, {}] for input '{}', got {} {}", npy_path,
         graph::shape_str(one).substr(1, graph::shape_str(one).size() - 2), in->name, a.dtype,
         graph::shape_str(a.shape));
  if (a.shape[0] < batch)
    fail("{}: holds {} samples, fewer than the batch size {}", npy_path, a.shape[0], batch);
  graph::Tensor all(graph::DType::kFloat32, a.shape);
  std::memcpy(all.raw(), a.data.data(), all.nbytes());
  std::vector<std::vector<graph::Tensor>> batches;
  for (int64_t i = 0; i + batch <= a.shape[0]; i += batch)
    batches.push_back({rows(all, i, batch).reshaped(shape)});
  return batches;
}

std::vector<std::vector<graph::Tensor>> calibration_batches(const graph::Graph &graph,
                                                            const std::string &npy_path,
                                                            std::string *source) {
  const graph::Shape &shape = calibrated_input(graph).shape;
  const int64_t batch = shape[0];
  if (!npy_path.empty()) return calibration_batches(graph, read_npy(npy_path), npy_path, source);
  std::vector<std::vector<graph::Tensor>> batches;
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

namespace {

// Everything after the import: `g` came from `source` (a file, or a model in memory).
// `onnx_path`: the model's file ("" for a model given as bytes).
CompiledModel compile_graph(graph::Graph g, const std::string &source, const std::string &onnx_path,
                            double import_ms, const isa::HwConfig &config,
                            const CompileOptions &options, Clock::time_point start) {
  CompiledModel result;
  auto stage = [&](const std::string &name, Clock::time_point t0, std::string summary,
                   std::optional<double> ms = std::nullopt) {
    result.stages.push_back({name, ms ? *ms : ms_since(t0), summary});
    if (options.log)
      options.log(
          fmt::format("{:<16} {:8.1f} ms  {}", name, result.stages.back().milliseconds, summary));
  };
  stage("import", start, fmt::format("{} nodes from {}", g.num_nodes(), source), import_ms);

  const bool calibration_given = !options.calibration.empty() || options.calibration_data;
  std::vector<std::vector<graph::Tensor>> calib;
  if (options.quantize && graph::has_qdq(g)) {
    // Quantized by its author: the model's own scales, nothing to calibrate.
    if (calibration_given || options.calibration_method_given)
      fail(
          "{}: the model is quantized already (QuantizeLinear/DequantizeLinear) and runs with "
          "its own scales; drop --calibration and --calibrate-method",
          source);
    result.calibration_source = "none: the model's own scales (QuantizeLinear/DequantizeLinear)";
    stage("calibration data", Clock::now(), result.calibration_source);
  } else if (options.quantize) {
    const auto t0 = Clock::now();
    calib = options.calibration_data
                ? calibration_batches(
                      g, *options.calibration_data,
                      options.calibration.empty() ? "calibration array" : options.calibration,
                      &result.calibration_source)
                : calibration_batches(g, options.calibration, &result.calibration_source);
    stage("calibration data", t0, result.calibration_source);
  }
  graph::QuantizeOptions qo = options.quantize_options;
  if (options.quantize && options.max_layer_loss_db && !calib.empty()) {
    // The layers that lose most stay in float on the CPU (quant_report.h).
    if (onnx_path.empty() || options.calibration_data)
      fail(
          "{}: --max-layer-loss compares each layer against the model read from its file with "
          "the calibration .npy; compile the model from a file, or name the layers to keep in "
          "float (keep_float)",
          source);
    const auto t0 = Clock::now();
    qo.keep_float = layers_kept_float(onnx_path, config, options);
    std::vector<std::string> names(qo.keep_float.begin(), qo.keep_float.end());
    std::sort(names.begin(), names.end());
    stage("max_layer_loss", t0,
          fmt::format("{} layer{} below {} dB SQNR kept in float{}{}", names.size(),
                      names.size() == 1 ? "" : "s", *options.max_layer_loss_db,
                      names.empty() ? "" : ": ", fmt::join(names, ", ")));
  }

  // The tuned schedules (compile_imported looked them up), which also decide the graph's
  // folding and fusion choices.
  const lower::TunedLookup &tuned = options.tuned;
  const auto decisions = std::make_shared<std::vector<lower::GraphDecision>>();
  const lower::GraphChoices &choices = options.graph_choices;
  graph::PipelineOptions po;
  po.quantize = options.quantize;
  po.calibration = options.calibration_options;
  po.quantize_options = qo;
  po.accel_legality = lower::accel_legality(config, options.vthreads);
  po.fold_windows = lower::window_folding(config, options.vthreads, choices.fold, tuned, decisions);
  po.fuse_residual_adds =
      lower::fusion_policy(config, options.vthreads, choices.fuse, tuned, "add", decisions);
  po.cpu_block = options.cpu_block;
  po.fuse_pools =
      lower::fusion_policy(config, options.vthreads, choices.fuse, tuned, "pool", decisions);
  po.chain_convs =
      lower::fusion_policy(config, options.vthreads, choices.chain, tuned, "chain", decisions);
  if (!options.dump_dir.empty()) po.dump_dir = options.dump_dir + "/graph";
  po.log = options.log;
  graph::PipelineResult pr = graph::run_graph_pipeline(g, config, calib, po);
  for (const auto &p : pr.passes) result.stages.push_back({p.name, p.milliseconds, p.summary});
  result.graph_decisions = *decisions;
  std::vector<std::string> by_cycles;
  for (const lower::GraphDecision &d : *decisions)
    if (d.tuned)
      by_cycles.push_back(fmt::format("{} {} ({} cycles, else {})", d.node, d.choice,
                                      d.chosen_cycles, d.other_cycles));
  if (!by_cycles.empty())
    stage("graph_choices", Clock::now(),
          fmt::format("{} of {} folding and fusion choices by tuned cycles: {}", by_cycles.size(),
                      decisions->size(), fmt::join(by_cycles, "; ")));

  auto t0 = Clock::now();
  isa::Package package = package_graph(g, pr.memory, config);
  package.model = std::filesystem::path(source).filename().string();
  stage("package", t0,
        fmt::format("{} steps, {} tensors, arena {} bytes", package.steps.size(),
                    package.tensors.size(), package.arena_bytes));

  t0 = Clock::now();
  lower::ModelLowerOptions lo;
  lo.vthreads = options.vthreads;
  if (!options.dump_dir.empty()) lo.dump_dir = options.dump_dir + "/layers";
  lo.log = options.log ? [&](const std::string &line) { options.log("  " + line); }
                       : std::function<void(const std::string &)>();
  lo.on_layer = [&](size_t step, const lower::Layer &layer) {
    result.accel_layers.push_back({step, layer});
  };
  lo.tuned = tuned;
  const int lowered = lower::lower_model(g, config, package, lo);
  const int programs = options.program_per_layer ? lowered : lower::join_programs(package);
  stage("lower_accel", t0,
        fmt::format("{} accelerator layers compiled, run as {} program{}", lowered, programs,
                    programs == 1 ? "" : "s"));
  package.validate(source);
  result.package = std::move(package);
  result.seconds = ms_since(start) / 1000.0;
  return result;
}

graph::ImportOptions import_options(const CompileOptions &options) {
  graph::ImportOptions io;
  io.dims["N"] = options.batch;
  io.batch = options.batch;
  io.input_shape = options.input_shape;
  io.bind_hint =
      "give the model's input with --input X.npy, whose shape binds every dimension (--batch N "
      "binds dimension 0)";
  return io;
}

// The accelerator cycles of `compiled` by its layers' tuned cycles; nullopt when a layer has
// none.
std::optional<uint64_t> tuned_total(const CompiledModel &compiled,
                                    const lower::TunedLookup &tuned) {
  uint64_t total = 0;
  for (const AccelLayer &a : compiled.accel_layers) {
    const std::optional<lower::TunedSchedule> s = tuned(a.layer);
    if (!s) return std::nullopt;
    total += s->cycles;
  }
  return total;
}

// compile_graph on the graph `import` gives, guarded: each folding and fusion choice follows
// the tuned cycles of its own forms, in the pipeline's order, so a choice that leaves the
// heuristic's (folding a convolution whose heuristic form then fused its pool, say) may lose
// more in a later choice than it won. Where any did, the program of the heuristic's choices
// is compiled too, and the one of fewer tuned cycles is kept (the one whose every layer was
// tuned where only one is; the heuristic's where neither is).
CompiledModel compile_imported(const std::function<graph::Graph()> &import,
                               const std::string &source, const std::string &onnx_path,
                               const isa::HwConfig &config, const CompileOptions &options) {
  CompileOptions o = options;
  if (!o.tuned)
    o.tuned = tuning::tuned_lookup(config, o.tuning_logs, o.use_tuning_db, o.tuning_db_dir);
  auto start = Clock::now();
  CompiledModel chosen =
      compile_graph(import(), source, onnx_path, ms_since(start), config, o, start);
  const bool left_heuristic =
      std::any_of(chosen.graph_decisions.begin(), chosen.graph_decisions.end(),
                  [](const lower::GraphDecision &d) { return d.tuned && !d.heuristic; });
  if (!left_heuristic) return chosen;
  CompileOptions as_heuristic = o;
  as_heuristic.graph_choices = {lower::GraphChoice::kHeuristic, lower::GraphChoice::kHeuristic,
                                lower::GraphChoice::kHeuristic};
  as_heuristic.log = nullptr;  // the log has the first compile's stages; this one is summed up
  const double first_seconds = chosen.seconds;
  start = Clock::now();
  CompiledModel heuristic =
      compile_graph(import(), source, onnx_path, ms_since(start), config, as_heuristic, start);
  const std::optional<uint64_t> a = tuned_total(chosen, o.tuned),
                                b = tuned_total(heuristic, o.tuned);
  // Only a program whose every layer was tuned can be weighed; one that is wins over one that
  // is not.
  const bool keep = a && (!b || *a < *b);
  CompiledModel &kept = keep ? chosen : heuristic;
  kept.seconds = first_seconds + heuristic.seconds;
  kept.stages.push_back(
      {"graph_choices", 0,
       fmt::format("the tuned folding and fusion choices: {} cycles; the heuristic's, compiled "
                   "too: {}; kept {}",
                   a ? std::to_string(*a) : "not all tuned",
                   b ? std::to_string(*b) : "not all tuned",
                   keep ? "the tuned choices" : "the heuristic's")});
  if (o.log)
    o.log(fmt::format("{:<16} {:8.1f} ms  {}", "graph_choices", 0.0, kept.stages.back().summary));
  return std::move(kept);
}

}  // namespace

graph::Graph import_model(const std::string &onnx_path, const CompileOptions &options) {
  graph::Graph g = graph::import_onnx(onnx_path, import_options(options));
  if (g.name.empty()) g.name = std::filesystem::path(onnx_path).stem().string();
  return g;
}

CompiledModel compile_model(const std::string &onnx_path, const isa::HwConfig &config,
                            const CompileOptions &options) {
  return compile_imported([&] { return import_model(onnx_path, options); }, onnx_path, onnx_path,
                          config, options);
}

CompiledModel compile_model_bytes(const std::string &onnx_bytes, const std::string &source,
                                  const isa::HwConfig &config, const CompileOptions &options) {
  return compile_imported(
      [&] {
        graph::Graph g = graph::import_onnx_bytes(onnx_bytes, source, import_options(options));
        if (g.name.empty()) g.name = std::filesystem::path(source).stem().string();
        return g;
      },
      source, "", config, options);
}

}  // namespace vacc::compile
