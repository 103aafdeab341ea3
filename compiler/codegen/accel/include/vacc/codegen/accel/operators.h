// Operators on the accelerator, compiled to command lists: conv2d (NCHWnc, any kernel, stride
// and padding, the padding done by the DMA) and dense, both with fused bias add, ReLU and
// shift-and-clip requantization on the ALU (one shift or one per output channel, any clip
// bounds; compiler/ops.h gives layouts and semantics), and the residual add.
// Each has a default schedule that derives its tiles from the config's scratchpad capacities
// (a layer no tile fits is a diagnostic) and uses latency hiding (2 virtual threads by
// default, 1 selectable). A conv with few input channels (ResNet-18's first layer) can fold
// its kernel window into the reduction: the host packs the input im2col-style (im2col.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vacc/codegen/accel/codegen.h"
#include "vacc/compiler/ops.h"
#include "vacc/compiler/pipeline.h"
#include "vacc/isa/command.h"
#include "vacc/isa/config.h"
#include "vacc/tir/func.h"

namespace vacc::codegen::accel {

struct LayerOptions {
  int vthreads = 2;                                 // 1 or 2; a layer too small to split runs on 1
  std::optional<compiler::AccelSchedule> schedule;  // overrides the default schedule
  CodegenOptions codegen;
  compiler::PipelineOptions pipeline;
};

// DRAM bytes one run of a command list moves, per direction, from its DMA commands.
struct Traffic {
  uint64_t load_bytes = 0;   // inp + wgt + acc loads (padding is not read)
  uint64_t store_bytes = 0;  // out
  uint64_t insn_bytes = 0;   // instruction stream, 16 bytes per DMA/GEMM/ALU command
  uint64_t uop_bytes = 0;    // micro-op kernels, each loaded at least once
  uint64_t data_bytes() const { return load_bytes + store_bytes; }
};
Traffic traffic_of(const isa::CommandList &list, const isa::HwConfig &config);

struct CompiledLayer {
  std::string name;
  compiler::AccelSchedule schedule;
  compiler::Operator op;  // the scheduled operator (args: data, weight, bias, [shifts,] out;
                          // for the add: a, b, weight, out)
  tir::Func final_ir;     // after the pipeline: what the interpreter checks
  isa::CommandList commands;
  Traffic traffic;
};

// The default schedules. Throw vacc::Error naming the layer and the scratchpad when not even
// the smallest tile fits, or when a parameter is unsupported.
compiler::AccelSchedule default_conv2d_schedule(const isa::HwConfig &config,
                                                const compiler::Conv2dParams &p, int vthreads,
                                                const std::string &name = "conv2d");
compiler::AccelSchedule default_dense_schedule(const isa::HwConfig &config,
                                               const compiler::DenseParams &p, int vthreads,
                                               const std::string &name = "dense");

// Checks a conv's parameters against what the accelerator supports (channel blocks, DMA
// padding limits, kernel inside the padded input); throws vacc::Error naming the layer.
void check_conv2d_supported(const isa::HwConfig &config, const compiler::Conv2dParams &p,
                            const std::string &name);

// Checks a requantization (shift or per-channel shifts, clip bounds) for an operator with
// `out_channels` outputs; throws vacc::Error naming the layer.
void check_requant_supported(const isa::HwConfig &config, const compiler::Requant &q,
                             int64_t out_channels, const std::string &name);

CompiledLayer compile_conv2d(const isa::HwConfig &config, const compiler::Conv2dParams &p,
                             const LayerOptions &options = {}, const std::string &name = "conv2d");
CompiledLayer compile_dense(const isa::HwConfig &config, const compiler::DenseParams &p,
                            const LayerOptions &options = {}, const std::string &name = "dense");

// The residual add (vacc.QAdd, docs/quantization.md) of two int8 tensors in the activation
// layout [N/B, C/BO, H, W, B, BO]:
//   out = clip(((a << lshift_a) + (b << lshift_b) + round) >> rshift, lo, hi), narrowed,
// round = 2^(rshift-1) when rshift > 0, lo = relu ? 0 : -128 and hi = 127 unless given.
// The operator's arguments are [a, b, weight, out]; `weight` [2, BO, BI] int8 is the constant
// add_weight() returns (scaled identities: the inputs reach the accumulators through the
// GEMM core). Needs gemm.block_in == gemm.block_out.
struct AddParams {
  int64_t batch = 1, channels = 16, height = 8, width = 8;
  int lshift_a = 0, lshift_b = 0, rshift = 0;
  bool relu = false;
  std::optional<int64_t> clip_min, clip_max;
  int64_t lo(int bits) const {
    return clip_min ? *clip_min : relu ? 0 : -(int64_t{1} << (bits - 1));
  }
  int64_t hi(int bits) const { return clip_max ? *clip_max : (int64_t{1} << (bits - 1)) - 1; }
};

void check_add_supported(const isa::HwConfig &config, const AddParams &p, const std::string &name);
// Tiles of whole rows of `tile_oc` channel blocks (tile_ic unused), as many as fit.
compiler::AccelSchedule default_add_schedule(const isa::HwConfig &config, const AddParams &p,
                                             int vthreads, const std::string &name = "add");
// The values of the add's `weight` argument, [2, BO, BI].
std::vector<int64_t> add_weight(const isa::HwConfig &config, const AddParams &p);
CompiledLayer compile_add(const isa::HwConfig &config, const AddParams &p,
                          const LayerOptions &options = {}, const std::string &name = "add");

}  // namespace vacc::codegen::accel
