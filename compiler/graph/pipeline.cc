#include "vacc/graph/pipeline.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "vacc/graph/passes/align_scales.h"
#include "vacc/graph/passes/block_cpu_layout.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/constant_folding.h"
#include "vacc/graph/passes/correct_bias.h"
#include "vacc/graph/passes/equalize_channels.h"
#include "vacc/graph/passes/fold_batch_norm.h"
#include "vacc/graph/passes/fold_windows.h"
#include "vacc/graph/passes/fuse.h"
#include "vacc/graph/passes/fuse_activations.h"
#include "vacc/graph/passes/fuse_conv_adds.h"
#include "vacc/graph/passes/fuse_matmul_epilogues.h"
#include "vacc/graph/passes/fuse_pools.h"
#include "vacc/graph/passes/fuse_residual_adds.h"
#include "vacc/graph/passes/learn_rounding.h"
#include "vacc/graph/passes/pack_layout.h"
#include "vacc/graph/passes/partition.h"
#include "vacc/graph/passes/quantize_qdq.h"
#include "vacc/graph/passes/recognize_gelu.h"
#include "vacc/graph/passes/recognize_layer_norm.h"
#include "vacc/graph/passes/round_weights.h"
#include "vacc/isa/program.h"

namespace vacc::graph {

PipelineResult run_graph_pipeline(Graph &graph, const isa::HwConfig &config,
                                  const std::vector<std::vector<Tensor>> &calibration,
                                  const PipelineOptions &options) {
  PipelineResult result;
  if (!options.dump_dir.empty()) std::filesystem::create_directories(options.dump_dir);
  bool stopped = false;  // past options.stop_after
  auto step = [&](const std::string &name, const std::function<std::string()> &pass) {
    if (stopped) return;
    stopped = name == options.stop_after;
    auto start = std::chrono::steady_clock::now();
    std::string summary = pass();
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    result.passes.push_back({name, ms, summary});
    if (options.log) options.log(fmt::format("{:<16} {:8.1f} ms  {}", name, ms, summary));
    if (!options.dump_dir.empty()) {
      std::ofstream(fmt::format("{}/{:02}_{}.txt", options.dump_dir, result.passes.size(), name))
          << print_graph(graph);
    }
  };
  step("import", [&] { return fmt::format("{} nodes", graph.num_nodes()); });
  // A model quantized by its author runs with its own scales: its QDQ pairs become integer
  // operators before folding turns its weights' DequantizeLinear into float constants.
  const bool qdq = options.quantize && has_qdq(graph);
  if (qdq)
    step("quantize_qdq", [&] {
      return fmt::format("{} integer ops with the model's own scales", quantize_qdq(graph));
    });
  step("fold_constants", [&] { return fmt::format("{} nodes folded", fold_constants(graph)); });
  step("fold_batch_norm", [&] { return fmt::format("{} folded", fold_batch_norm(graph)); });
  step("fold_constants", [&] { return fmt::format("{} nodes folded", fold_constants(graph)); });
  step("recognize_layer_norm",
       [&] { return fmt::format("{} recognized", recognize_layer_norm(graph)); });
  step("recognize_gelu", [&] { return fmt::format("{} recognized", recognize_gelu(graph)); });
  if (qdq) {
    step("fold_constants", [&] { return fmt::format("{} nodes folded", fold_constants(graph)); });
    step("fuse", [&] { return fmt::format("{} fused", fuse(graph)); });
  } else if (options.quantize) {
    Calibration calib;
    if (options.quantize_options.equalize_channels)
      step("equalize_channels", [&] {
        return fmt::format("{} layers' output channels balanced against their readers",
                           equalize_channels(graph, calibration));
      });
    step("calibrate", [&] {
      calib = calibrate(graph, calibration, options.calibration);
      return fmt::format("{} batches, {} values, {}", calib.samples, calib.abs_max.size(),
                         calibration_method_name(calib.method));
    });
    if (options.quantize_options.align_scales)
      step("align_scales", [&] {
        return fmt::format("{} layers rescaled to fill their int8 grids",
                           align_scales(graph, calib));
      });
    WeightRounding rounding;
    const QuantizeOptions::Rounding how = options.quantize_options.rounding;
    const bool uses_hessians = how != QuantizeOptions::Rounding::kNearest;
    if (uses_hessians)
      step("input_hessians", [&] {
        rounding.hessians =
            input_hessians(graph, calibration, how == QuantizeOptions::Rounding::kLearned);
        return fmt::format("{} layers' input Hessians over {} batches", rounding.hessians.size(),
                           calibration.size());
      });
    if (how == QuantizeOptions::Rounding::kLearned)
      rounding.learn_steps = learned_rounding_steps(graph, rounding.hessians,
                                                    options.quantize_options.rounding_seconds);
    ChannelMeans float_means;  // by name: quantize replaces the float values
    step("quantize", [&] {
      for (const auto &[v, m] : calib.channel_mean) float_means[v->name] = m;
      const int ops = quantize(graph, calib, options.quantize_options, &result.int8_forms,
                               uses_hessians ? &rounding : nullptr);
      int unsigned_values = 0;
      for (const Node *n : graph.nodes())
        unsigned_values += n->op == OpKind::kRequantize && n->outputs[0]->zero_point != 0;
      std::string weights;
      if (how == QuantizeOptions::Rounding::kHessian)
        weights = ", weights rounded with their inputs' Hessians";
      if (how == QuantizeOptions::Rounding::kLearned)
        weights = fmt::format(
            ", weights' rounding learned in {} of {} layers ({} of {} channels took it; their "
            "output error {:.3g} of nearest rounding's), the rest rounded with their Hessians",
            rounding.layers_learned, rounding.hessians.size(), rounding.channels_learned,
            rounding.channels,
            rounding.nearest_error > 0 ? rounding.error / rounding.nearest_error : 1.0);
      return fmt::format("{} integer ops, {} activations as unsigned levels{}", ops,
                         unsigned_values, weights);
    });
    if (options.quantize_options.correct_bias)
      step("correct_bias", [&] {
        return fmt::format("{} layers corrected",
                           correct_bias(graph, result.int8_forms, float_means, calibration));
      });
    step("fold_constants", [&] { return fmt::format("{} nodes folded", fold_constants(graph)); });
    step("fuse", [&] { return fmt::format("{} fused", fuse(graph)); });
  } else {
    step("fuse_activations", [&] { return fmt::format("{} fused", fuse_activations(graph)); });
  }
  step("partition", [&] {
    return fmt::format("{} of {} nodes on the accelerator",
                       partition(graph, options.accel_legality), graph.num_nodes());
  });
  if (options.fold_windows)
    step("fold_windows", [&] {
      return fmt::format("{} convolutions folded",
                         fold_windows(graph, config, options.fold_windows));
    });
  if (options.fuse_residual_adds)
    step("fuse_residual_adds", [&] {
      return fmt::format("{} adds fused", fuse_residual_adds(graph, options.fuse_residual_adds));
    });
  if (options.fuse_pools)
    step("fuse_pools",
         [&] { return fmt::format("{} pools fused", fuse_pools(graph, options.fuse_pools)); });
  step("pack_layout",
       [&] { return fmt::format("{} layout transforms", pack_layout(graph, config)); });
  if (options.chain_convs)
    step("chain_convs",
         [&] { return fmt::format("{} conv chains", chain_convs(graph, options.chain_convs)); });
  if (!options.quantize && options.cpu_block > 0) {
    step("block_cpu_layout", [&] {
      return fmt::format("{} nodes in NCHW{}c", block_cpu_layout(graph, options.cpu_block),
                         options.cpu_block);
    });
    step("fuse_conv_adds", [&] { return fmt::format("{} fused", fuse_conv_adds(graph)); });
    step("fuse_activations", [&] { return fmt::format("{} fused", fuse_activations(graph)); });
    step("fuse_matmul_epilogues",
         [&] { return fmt::format("{} fused", fuse_matmul_epilogues(graph)); });
  }
  step("plan_memory", [&] {
    // The DMA addresses activations in tiles: every slot aligned to the largest tile.
    // Float graphs run on the CPU alone: their concatenations are written in place.
    result.memory = plan_memory(graph, isa::region_alignment(config), !options.quantize);
    return fmt::format("arena {} bytes (unshared {}), {} concatenations in place",
                       result.memory.arena_bytes, result.memory.total_bytes,
                       result.memory.in_place.size());
  });
  return result;
}

}  // namespace vacc::graph
