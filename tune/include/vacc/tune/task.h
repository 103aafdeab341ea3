// A tuning task: one accelerator workload (lower::workload_key) of a model or benchmark, the
// layer that represents it, and how often it occurs (its weight in the model's cycles). Layers
// of one workload share a schedule space and have the same cycles under every schedule, so
// each is tuned once.
#pragma once

#include <string>
#include <vector>

#include "vacc/compile/compile_model.h"
#include "vacc/isa/config.h"
#include "vacc/lower/operators.h"

namespace vacc::tune {

struct TuneTask {
  std::string workload;  // lower::workload_key(layer)
  lower::Layer layer;    // the first layer of that workload
  int weight = 1;        // how many of the model's layers it stands for
  std::vector<std::string> layers;  // their names
  // A form the heuristic's program does not have: a convolution folded or unfolded, or a
  // pool or add kept apart or fused, the other way from the heuristic (lower/graph_choices.h).
  // Compiling takes it where its tuned cycles beat the heuristic's form.
  bool alternative = false;
  // An alternative: how it differs from the heuristic's layer of its name ("unfolded",
  // "folded", "pool apart", "add fused", ...; "apart" for a pool or add that the heuristic
  // fuses).
  std::string form;
};

// Groups layers by workload, in order of first occurrence.
std::vector<TuneTask> group_tasks(const std::vector<lower::Layer> &layers);

// The tasks of a model compiled for `config` as `vacc compile` compiles it (`options`: the
// batch, input shape, calibration; its tuning database is not consulted, so the layers are
// the model's whatever was tuned before), then the alternative forms of its folding and fusion
// sites: the model compiled with every site folded or not and fused or not (each site's choice
// is its own, so every form of every site is in one of the four).
std::vector<TuneTask> model_tasks(const std::string &onnx_path, const isa::HwConfig &config,
                                  compile::CompileOptions options);

// The tasks of `vacc bench resnet18-convs`: ResNet-18's conv layers as that benchmark lowers them.
std::vector<TuneTask> resnet18_conv_tasks(const isa::HwConfig &config);

}  // namespace vacc::tune
