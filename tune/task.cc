#include "vacc/tune/task.h"

#include <map>
#include <string>
#include <variant>
#include <vector>

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

// How `alt` differs from `heuristic`, the heuristic's layer of the same name (null: none).
std::string form_of(const lower::Layer &alt, const lower::Layer *heuristic) {
  if (std::holds_alternative<lower::ConvChainParams>(alt.params)) return "chain fused";
  const auto *a = std::get_if<lower::Conv2dParams>(&alt.params);
  if (!a) return "apart";  // a pool or add of its own
  const auto *h = heuristic ? std::get_if<lower::Conv2dParams>(&heuristic->params) : nullptr;
  if (!h) return "";
  std::vector<std::string> parts;
  const bool folded_a = a->kernel_h * a->kernel_w == 1, folded_h = h->kernel_h * h->kernel_w == 1;
  if (folded_a != folded_h) parts.push_back(folded_a ? "folded" : "unfolded");
  if (a->pool.has_value() != h->pool.has_value())
    parts.push_back(a->pool ? "pool fused" : "pool apart");
  if (a->residual.has_value() != h->residual.has_value())
    parts.push_back(a->residual ? "add fused" : "add apart");
  std::string form;
  for (const std::string &p : parts) form += (form.empty() ? "" : ", ") + p;
  return form;
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
  std::map<std::string, lower::Layer> by_name;
  for (const compile::AccelLayer &a : heuristic.accel_layers)
    by_name.emplace(a.layer.name, a.layer);
  using lower::GraphChoice;
  // Conv chains need STORE INP: without it only one form exists.
  const std::vector<GraphChoice> chains =
      config.store_inp ? std::vector<GraphChoice>{GraphChoice::kAlways, GraphChoice::kNever}
                       : std::vector<GraphChoice>{GraphChoice::kNever};
  for (GraphChoice fold : {GraphChoice::kAlways, GraphChoice::kNever})
    for (GraphChoice fuse : {GraphChoice::kAlways, GraphChoice::kNever})
      for (GraphChoice chain : chains) {
        options.graph_choices = {fold, fuse, chain};
        for (TuneTask &t :
             group_tasks(layers_of(compile::compile_model(onnx_path, config, options)))) {
          auto [it, inserted] = index.try_emplace(t.workload, tasks.size());
          if (inserted) {
            t.alternative = true;
            const auto h = by_name.find(t.layer.name);
            t.form = form_of(t.layer, h == by_name.end() ? nullptr : &h->second);
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
