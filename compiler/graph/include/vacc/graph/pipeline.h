// The graph-level compilation pipeline in one place: the passes in order, each logged and
// timed by name, with the IR dumpable after every pass.
//
//   fold_constants, fold_batch_norm, fold_constants, recognize_layer_norm, recognize_gelu,
//   [equalize_channels,] calibrate, [align_scales,] [input_hessians,] quantize (its weights
//   rounded with the Hessians or learned from them where asked), [correct_bias,]
//   fold_constants, fuse,
//   partition, fold_windows, fuse_residual_adds, fuse_pools, pack_layout, chain_convs,
//   plan_memory
//
// Float graphs (quantize off) fuse activations into convolutions instead of quantizing and,
// for the CPU backend (cpu_block > 0), take its blocked layout after pack_layout:
//   block_cpu_layout, fuse_conv_adds, fuse_activations
// A model quantized by its author (QuantizeLinear/DequantizeLinear, passes/quantize_qdq.h)
// is not calibrated: quantize_qdq runs first, then the folding, fold_constants and fuse.
//
// The result is the graph the accelerator code generator and the CPU fallback consume:
// int8 fused operators marked for the accelerator in blocked layout, the rest on the CPU,
// and a static memory plan for the activations, its slots aligned for the accelerator's DMA.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "vacc/graph/graph.h"
#include "vacc/graph/passes/calibrate.h"
#include "vacc/graph/passes/chain_convs.h"
#include "vacc/graph/passes/fold_windows.h"
#include "vacc/graph/passes/fuse_pools.h"
#include "vacc/graph/passes/fuse_residual_adds.h"
#include "vacc/graph/passes/partition.h"
#include "vacc/graph/passes/plan_memory.h"
#include "vacc/graph/passes/quantize.h"
#include "vacc/isa/config.h"
#include "vacc/support/pass_record.h"

namespace vacc::graph {

struct PipelineOptions {
  bool quantize = true;  // false: float graph (folding only), everything on the CPU
  // Which nodes the accelerator runs (the backend's, lower::why_not_accelerated); unset:
  // every node on the CPU.
  AccelLegality accel_legality;
  // Which accelerator convolutions fold their windows into the reduction (the backend's,
  // lower::window_folding); unset: none.
  WindowFolding fold_windows;
  // Which residual adds fuse into their convolution (the backend's legality of the fused
  // convolution and its tuned choice, lower::fusion_policy); unset: none.
  FusionPolicy fuse_residual_adds;
  // Which max pools fuse into their convolution (the same, of the fused convolution); unset:
  // none.
  FusionPolicy fuse_pools;
  // Which convolutions chain with the 1x1 convolution reading their result (chain_convs.h:
  // the backend's legality of the chain, its measured or modelled cycles); unset: none.
  FusionPolicy chain_convs;
  CalibrationOptions calibration;
  QuantizeOptions quantize_options;
  // Float graphs: channels per block of the CPU backend's NCHWc layout (block_cpu_layout.h);
  // 0 keeps them plain (for the GPU fallback, whose kernels read plain tensors).
  int64_t cpu_block = 0;
  // Stops after the pass of this name ("" runs them all): the quantization report takes the
  // float graph as quantize reads it (after "align_scales" when that runs, else after
  // "recognize_gelu", as calibrate reads it) and the int8 graph as
  // quantize and correct_bias leave it (after "correct_bias" when bias correction is on, else
  // after "quantize"), each with its values' names as the compiled model has them.
  std::string stop_after;
  std::string dump_dir;                          // when set, writes NN_<pass>.txt after every pass
  std::function<void(const std::string &)> log;  // one line per pass, with its time
};

struct PipelineResult {
  std::vector<PassRecord> passes;
  MemoryPlan memory;
  // quantize's int8 form of each float value (passes/quantize.h); the pointers hold while the
  // graph stops after quantize or correct_bias (later passes replace the values).
  Int8Forms int8_forms;
};

// `calibration` holds batches of sample inputs (as ReferenceExecutor::run takes them); required
// when options.quantize is set, unless the model holds its own scales (has_qdq).
PipelineResult run_graph_pipeline(Graph &graph, const isa::HwConfig &config,
                                  const std::vector<std::vector<Tensor>> &calibration,
                                  const PipelineOptions &options = {});

}  // namespace vacc::graph
