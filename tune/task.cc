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

std::vector<TuneTask> model_tasks(const std::string &onnx_path, const isa::HwConfig &config,
                                  compile::CompileOptions options) {
  options.use_tuning_db = false;
  options.tuning_logs.clear();
  const compile::CompiledModel compiled = compile::compile_model(onnx_path, config, options);
  std::vector<lower::Layer> layers;
  for (const compile::AccelLayer &a : compiled.accel_layers) layers.push_back(a.layer);
  return group_tasks(layers);
}

std::vector<TuneTask> resnet18_conv_tasks(const isa::HwConfig &config) {
  std::vector<lower::Layer> layers;
  for (const bench::ConvLayerSpec &spec : bench::resnet18_convs())
    layers.push_back({spec.name, bench::accel_conv_params(config, spec, true)});
  return group_tasks(layers);
}

}  // namespace vacc::tune
