// The compiler driver: an ONNX model to a package (.vpkg), the whole pipeline in one place —
// import, the graph passes (graph/pipeline.h: folding, calibration, int8 quantization,
// fusion, partitioning by the accelerator's legality, layout packing, the memory plan), the
// graph as package steps, and the accelerator steps lowered to command lists
// (compiler/lower: lower_model.h). Each stage is timed by name.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/graph/tensor.h"
#include "vacc/isa/config.h"
#include "vacc/isa/package.h"
#include "vacc/lower/graph_choices.h"
#include "vacc/lower/lower_model.h"
#include "vacc/lower/operators.h"
#include "vacc/support/npy.h"
#include "vacc/support/pass_record.h"

namespace vacc::compile {

struct CompileOptions {
  int64_t batch = 1;  // value of the model's symbolic batch dimension (dimension 0)
  // The shape of the input the model will run on (vacc run --input's .npy): binds every
  // symbolic dimension of the model's first graph input (graph/onnx_import.h).
  std::vector<int64_t> input_shape;
  bool quantize = true;     // false: the float model, every step on the CPU
  std::string calibration;  // .npy of sample inputs; "" = see calibration_batches()
  // Sample inputs in memory (the Python module's numpy array), in place of the .npy file;
  // `calibration` then only names them in messages ("" = "calibration array").
  std::optional<NpyArray> calibration_data;
  graph::CalibrationOptions calibration_options;  // method (--calibrate-method), percentile
  bool calibration_method_given = false;          // --calibrate-method named by the user
  graph::QuantizeOptions quantize_options;
  // --max-layer-loss: keeps in float (besides quantize_options.keep_float) every layer whose
  // int8 output, with float inputs, has an SQNR below this many dB on the calibration inputs
  // (package/quant_report.h); unset: none. Needs the model as a file (compile_model).
  std::optional<double> max_layer_loss_db;
  std::string dump_dir;  // graph after every pass, loop IR of every accelerator layer
  int vthreads = 2;      // latency hiding of the accelerator layers
  // Float models: channels per block of the CPU backend's NCHWc layout
  // (graph/passes/block_cpu_layout.h; 16 floats, an AVX-512 vector); 0 keeps tensors plain,
  // as the GPU fallback's kernels read them.
  int64_t cpu_block = 16;
  std::function<void(const std::string &)> log;
  // Tuned schedules (compiler/tuning): the per-user tuning database's for the config (unless
  // use_tuning_db is false) and these logs' (`--tuning-log`); the best of them per workload.
  std::vector<std::string> tuning_logs;
  bool use_tuning_db = true;
  std::string tuning_db_dir;  // "" = the per-user cache's
  // When set, the tuned schedules to use instead of the logs' and the database's (a sweep
  // point's own tuning).
  lower::TunedLookup tuned;
  // Window folding and pool/residual fusion (lower/graph_choices.h): by default decided by
  // the tuned cycles where both forms were tuned, else by the heuristic; `vacc tune` forces
  // them each way to find every form's workloads.
  lower::GraphChoices graph_choices;
  // Every accelerator layer its own device program, draining between layers, instead of one
  // program per run of consecutive accelerator layers (lower/join_programs.h).
  bool program_per_layer = false;
};

// An accelerator step's layer, as lowered (the tuner's tasks come from these).
struct AccelLayer {
  size_t step = 0;
  lower::Layer layer;
};

struct CompiledModel {
  isa::Package package;
  std::vector<AccelLayer> accel_layers;
  // Each folding and fusion site's decision, and whether tuned cycles made it.
  std::vector<lower::GraphDecision> graph_decisions;
  std::vector<PassRecord> stages;
  double seconds = 0;
  std::string calibration_source;  // where the calibration inputs came from
};

CompiledModel compile_model(const std::string &onnx_path, const isa::HwConfig &config,
                            const CompileOptions &options = {});
// The same from the bytes of a serialized ONNX ModelProto (a model exported in memory);
// `source` names it in messages and becomes the package's model name.
CompiledModel compile_model_bytes(const std::string &onnx_bytes, const std::string &source,
                                  const isa::HwConfig &config, const CompileOptions &options = {});

// The ONNX model imported as compile_model imports it (its batch and input shape bound by
// `options`).
graph::Graph import_model(const std::string &onnx_path, const CompileOptions &options);

// Inputs for `graph` (one input, batches of its batch size) from an .npy of samples [M, ...]
// (`vacc quant-report --input`); a vacc::Error naming the file and both shapes otherwise.
std::vector<std::vector<graph::Tensor>> sample_batches(const graph::Graph &graph,
                                                       const std::string &npy_path);

// Calibration inputs for `graph` (batches of its batch size): from `npy_path` when given;
// else, for a model whose metadata names its input normalization (vacc.mean, vacc.std, as the
// bundled Fashion-MNIST model does), 500 training images of Debian's dataset-fashion-mnist;
// else 4 batches of seeded standard-normal noise. `source` tells which.
std::vector<std::vector<graph::Tensor>> calibration_batches(const graph::Graph &graph,
                                                            const std::string &npy_path,
                                                            std::string *source);
// The same from sample inputs already in memory, named `name` in messages.
std::vector<std::vector<graph::Tensor>> calibration_batches(const graph::Graph &graph,
                                                            const NpyArray &samples,
                                                            const std::string &name,
                                                            std::string *source);

// A float32 tensor from a .npy file (f4, or f8 converted), checked against `shape`; a
// mismatch is a vacc::Error naming the file, `what` and both shapes.
graph::Tensor read_input_npy(const std::string &path, const graph::Shape &shape,
                             const std::string &what);
// The rule read_input_npy applies, on an array's NumPy dtype code ("f4", "f8", ...) and shape:
// the shape must equal `shape` up to dimensions of 1, and the elements be float32 (or float64,
// converted). A mismatch is the same vacc::Error, naming `source` (the file, or the array).
void check_input_array(const std::string &source, const std::string &dtype,
                       const graph::Shape &array_shape, const graph::Shape &shape,
                       const std::string &what);

}  // namespace vacc::compile
