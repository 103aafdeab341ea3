#include "vacc/tune/task.h"

#include <map>

#include "layer_bench.h"
#include "vacc/lower/schedule_space.h"

namespace vacc::tune {

std::vector<TuneTask> group_tasks(const std::vector<lower::Layer> &layers) {
  std::vector<TuneTask> tasks;
  std::map<std::string, size_t> index;
  for (const lower::Layer &layer : layers) {
    const std::string key = lower::workload_key(layer);
    auto [it, inserted] = index.try_emplace(key, tasks.size());
    if (inserted) tasks.push_back({key, layer, 0, {}});
    TuneTask &t = tasks[it->second];
    ++t.weight;
    t.layers.push_back(layer.name);
  }
  return tasks;
}

namespace {

std::vector<lower::Layer> layers_of(const compile::CompiledModel &compiled) {
  std::vector<lower::Layer> layers;
  for (const compile::AccelLayer &a : compiled.accel_layers) layers.push_back(a.layer);
  return layers;
}

}  // namespace

std::vector<TuneTask> model_tasks(const std::string &onnx_path, const isa::HwConfig &config,
                                  compile::CompileOptions options) {
  options.use_tuning_db = false;
  options.tuning_logs.clear();
  options.tuned = nullptr;
  options.graph_choices = {};
  const compile::CompiledModel heuristic = compile::compile_model(onnx_path, config, options);
  std::vector<TuneTask> tasks = group_tasks(layers_of(heuristic));
  if (heuristic.graph_decisions.empty()) return tasks;  // no site to decide

  std::map<std::string, size_t> index;
  for (size_t i = 0; i < tasks.size(); ++i) index[tasks[i].workload] = i;
  using lower::GraphChoice;
  for (GraphChoice fold : {GraphChoice::kAlways, GraphChoice::kNever})
    for (GraphChoice fuse : {GraphChoice::kAlways, GraphChoice::kNever}) {
      options.graph_choices = {fold, fuse};
      for (TuneTask &t :
           group_tasks(layers_of(compile::compile_model(onnx_path, config, options)))) {
        auto [it, inserted] = index.try_emplace(t.workload, tasks.size());
        if (inserted) {
          t.alternative = true;
          tasks.push_back(std::move(t));
        } else if (TuneTask &known = tasks[it->second];
                   known.alternative && t.weight > known.weight) {
          known.weight = t.weight;  // as often as the form occurs where it is taken everywhere
          known.layers = t.layers;
        }
      }
    }
  return tasks;
}

std::vector<TuneTask> resnet18_conv_tasks(const isa::HwConfig &config) {
  std::vector<lower::Layer> layers;
  for (const bench::ConvLayerSpec &spec : bench::resnet18_convs())
    layers.push_back({spec.name, bench::accel_conv_params(config, spec, true)});
  return group_tasks(layers);
}

}  // namespace vacc::tune
