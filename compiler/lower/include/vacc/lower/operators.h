// The accelerator's operators: what a layer is (its parameters), the tiling a schedule picks,
// and, per operator, the three things lowering asks of it (lower.cc): whether the accelerator
// supports it (check_supported), the default tiling for a config (default_schedule), and its
// compute definition with that tiling applied, as loop IR (define). An operator is its family's
// accel.cc (compiler/ops/<family>/) plus one alternative of LayerParams; nothing else needs to
// know it.
//
// Layouts (B = batch, BI = block_in, BO = block_out of the config; every channel count a
// multiple of its block):
//   conv2d data   [N/B, C/BI, H, W, B, BI]        int(inp_bits)
//          kernel [O/BO, C/BI/G, KH, KW, BO, BI]  int(wgt_bits), G = Conv2dParams::groups
//          bias   [N/B, O/BO, B, BO]              int(acc_bits)
//          out    [N/B, O/BO, OH, OW, B, BO]      int(inp_bits) (the pooled OH, OW with a
//                                                 fused max pool)
//   dense  data [N/B, C/BI, B, BI], weight [O/BO, C/BI, BO, BI], bias [N/B, O/BO, B, BO],
//          out [N/B, O/BO, B, BO]
//   add    a, b, out [N/B, C/BO, H, W, B, BO], weight [2, BO, BI] (add_weight())
// Conv and dense: out = clip((acc + bias) >> shift, lo, hi) narrowed, lo = relu ? 0 :
// -2^(bits-1) and hi = 2^(bits-1)-1 unless Requant gives its own bounds. With per-channel
// shifts the operator takes a fifth argument before out, shifts [N/B, O/BO, B, BO]
// int(acc_bits) (the bias layout), and the ALU shifts by it as a vector operand; with
// multipliers (Requant::multiplied) one more, multipliers in the same layout. A conv with
// a fused residual add takes two more before out: skip [N/B, O/BO, OH, OW, B, BO] int8 and
// skip_weight [1, BO, BI] (residual_weight()), which brings skip into the accumulators
// through the GEMM core as the add does (needs gemm.block_in == gemm.block_out).
// Add (vacc.QAdd, docs/quantization.md):
//   out = clip(((a << lshift_a) + (b << lshift_b) + round) >> rshift, lo, hi), narrowed,
// round = 2^(rshift-1) when rshift > 0; both int8 inputs reach the accumulators through the
// GEMM core with a scaled identity weight (needs gemm.block_in == gemm.block_out).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/te/tensor.h"
#include "vacc/tir/func.h"

namespace vacc::lower {

struct Requant {
  Requant() = default;
  Requant(int shift_, bool relu_) : shift(shift_), relu(relu_) {}  // {shift, relu}

  int shift = 8;
  bool relu = true;
  // One shift per output channel (size = out channels); empty = `shift` for every channel.
  std::vector<int64_t> channel_shifts;
  // Clip bounds; unset = the defaults above. They must fit the ALU's 16-bit immediate.
  std::optional<int64_t> clip_min, clip_max;
  // An imported QDQ model's own scales (docs/quantization.md): after the shift, clip to
  // [-pre_clip, pre_clip], multiply by multipliers[c] (one per output channel, an ACC vector
  // operand), shift right by post_shift and add zero_point, before the clip above. Empty:
  // power-of-two scales, the shift alone.
  std::vector<int64_t> multipliers;
  int64_t pre_clip = 0, zero_point = 0;
  int post_shift = 0;

  bool per_channel() const { return !channel_shifts.empty(); }
  bool multiplied() const { return !multipliers.empty(); }
  int64_t lo(int bits) const {
    return clip_min ? *clip_min : relu ? 0 : -(int64_t{1} << (bits - 1));
  }
  int64_t hi(int bits) const { return clip_max ? *clip_max : (int64_t{1} << (bits - 1)) - 1; }
};

// A residual add fused into a convolution's epilogue (vacc.QAdd's semantics with the
// convolution's requantized int8 output y as one operand and a skip tensor as the other):
//   out = clip(((y << lshift_out) + (skip << lshift_skip) + round) >> rshift, lo, hi).
struct Residual {
  int lshift_out = 0, lshift_skip = 0, rshift = 0;
  int64_t clip_min = -128, clip_max = 127;
};

// A max pool fused after a convolution: unpadded windows of kernel_h x kernel_w at the given
// strides over the convolution's output grid (a padded pool is fused by growing that grid
// with copies of its edge rows and columns, which never change a window's max: the graph's
// fuse_pools). The windows take the max of the accumulators before the requantization, which
// is monotone: the ALU then requantizes one output per window instead of every position.
struct PoolEpilogue {
  int64_t kernel_h = 3, kernel_w = 3, stride_h = 2, stride_w = 2;
};

struct Conv2dParams {
  int64_t batch = 1, in_channels = 16, out_channels = 16, height = 8, width = 8;
  int64_t kernel_h = 3, kernel_w = 3, stride_h = 1, stride_w = 1, pad_h = 1, pad_w = 1;
  // Independent slices of whole channel blocks (support/block_groups.h): output block ob reads
  // only the in_channels/groups input channels of its slice, blocks
  // [ob / (OB/groups) * CB/groups, +CB/groups); the kernel holds just those. A depthwise
  // convolution is groups = OB (= CB), its weight tiles diagonal; 1 is a dense convolution.
  int64_t groups = 1;
  Requant requant;
  std::optional<Residual> residual;
  std::optional<PoolEpilogue> pool;
  // The convolution's output grid.
  int64_t out_height() const { return (height + 2 * pad_h - kernel_h) / stride_h + 1; }
  int64_t out_width() const { return (width + 2 * pad_w - kernel_w) / stride_w + 1; }
  // The operator's output: the pooled grid with a pool, else the convolution's.
  int64_t result_height() const {
    return pool ? (out_height() - pool->kernel_h) / pool->stride_h + 1 : out_height();
  }
  int64_t result_width() const {
    return pool ? (out_width() - pool->kernel_w) / pool->stride_w + 1 : out_width();
  }
};

struct DenseParams {
  int64_t batch = 1, in_features = 32, out_features = 32;
  // Independent products side by side (vacc.QMatMul, attention's heads): every tensor gains a
  // leading axis of `groups` (data [G, N/B, C/BI, B, BI], weight [G, O/BO, C/BI, BO, BI], ...),
  // `batch` rows per group; 1 is a plain dense layer.
  int64_t groups = 1;
  Requant requant;
};

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

// 2-D pooling of int8 NCHWnc data (MaxPool, vacc.QAveragePool of docs/quantization.md) over
// windows of kernel_h x kernel_w at the given strides. The padded input is pad_top rows above
// the input and pad_left columns left of it; out_height x out_width windows (ONNX's, ceil_mode
// included: a window may reach past the explicit padding, into more zeros). Every window
// starts inside the input or the explicit padding.
//   max:     out = max of the window's inputs. Padding reads 0, so a padded max pool needs
//            input_nonnegative (its producer clips at 0 or above: 0 then never wins).
//   average: out = clip((sum * M(n) + 2^(rshift-1)) >> rshift, clip_min, clip_max), sum over
//            the window's inputs, n = its count (graph/qpool.h: the positions inside the input,
//            or inside the explicit padding with count_include_pad), M(n) = qpool_multiplier.
// Both inputs reach the accumulators through the GEMM core with an identity weight
// (pool_weight(); needs gemm.block_in == gemm.block_out): the average's sum is a GEMM over the
// window; the max's window is the ALU's max over the input tile in ACC. Layouts: data
// [N/B, C/BO, H, W, B, BO], out [N/B, C/BO, OH, OW, B, BO], weight [1, BO, BI]; an average whose
// counts differ between windows takes its multipliers [OH, OW, B, BO] int32 (pool_multipliers())
// before out.
struct PoolParams {
  enum class Kind { kMax, kAverage };
  Kind kind = Kind::kMax;
  int64_t batch = 1, channels = 16, height = 8, width = 8;
  int64_t kernel_h = 2, kernel_w = 2, stride_h = 2, stride_w = 2;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;  // explicit padding
  int64_t out_height = 4, out_width = 4;
  bool input_nonnegative = false;  // max
  bool count_include_pad = false;  // average
  int scale_bits = 0, rshift = 1;  // average: M(n) = qpool_multiplier(n, scale_bits)
  int64_t clip_min = -128, clip_max = 127;
  // Rows and columns of the padded input the windows read (the input, its explicit padding and
  // ceil_mode's overhang, less what no window reaches).
  int64_t padded_height() const { return (out_height - 1) * stride_h + kernel_h; }
  int64_t padded_width() const { return (out_width - 1) * stride_w + kernel_w; }
  // Whether a window reads padding (explicit or ceil_mode's).
  bool padded() const {
    return pad_top > 0 || pad_left > 0 || padded_height() > pad_top + height ||
           padded_width() > pad_left + width;
  }
};

// Two convolutions run depth first: `second` is a 1x1 convolution (stride 1, no padding, no
// groups, no fused pool; a fused residual add allowed) of `first`'s result, which never leaves
// the chip: per tile of output pixels, first's requantized int8 result for those pixels and
// all its channels is narrowed from ACC into INP by STORE INP (extensions.store_inp; needs
// gemm.block_in == gemm.block_out) and read there by second's GEMMs. `first` is any
// convolution without a fused pool or residual (grouped and depthwise included);
// second.in_channels = first.out_channels and second's grid is first's output grid.
// Arguments: first's [data, kernel, bias[, shifts][, multipliers]], then second's [kernel,
// bias[, shifts][, multipliers][, skip, skip_weight]], then out (second's output). DRAM sees
// first's input, second's skip and the output only.
struct ConvChainParams {
  Conv2dParams first, second;
};

// One accelerator layer: a name (for diagnostics and dumps) and its operator's parameters.
using LayerParams = std::variant<Conv2dParams, DenseParams, AddParams, PoolParams, ConvChainParams>;
struct Layer {
  std::string name;
  LayerParams params;
};

// Tile sizes: output rows/cols per tile, output/input channel blocks per tile, and the
// number of virtual threads (which split the output channel blocks).
struct AccelSchedule {
  int64_t tile_h = 4, tile_w = 4, tile_oc = 1, tile_ic = 1;
  int vthreads = 1;
  // conv2d: bias (and per-channel shifts) of all a virtual thread's channel blocks loaded once
  // at its start, instead of once per block of tile_oc channels. Costs ACC entries; saves the
  // LOAD ACC between channel blocks, which waits for both compute units to drain.
  bool bias_once = false;
  // conv2d: the virtual threads split the output rows instead of the output channel blocks.
  // Each thread then loads only its own rows of the input, not the whole input once per
  // thread's channels: what a layer whose input traffic bounds it (few channel blocks, a
  // large or unfolded input) needs.
  bool vthread_rows = false;
  // conv2d and dense: which operand a tile's loads keep in its scratchpad while the loop over
  // the other operand's tiles runs. kNone: channel tiles outside the spatial (row) tiles, and
  // every tile loads its input and weights per block of tile_ic. kWeights: the same order,
  // each channel tile's weights of all input blocks loaded once and reused by all its spatial
  // tiles (WGT holds them; a convolution loads them again for each batch block, its outermost
  // loop). kInputs: the spatial tiles outside the channel tiles, each spatial
  // tile's input of all input blocks loaded once and reused by all channel tiles (INP holds
  // it); bias and shifts then load per tile unless bias_once.
  enum class Resident : int { kNone = 0, kWeights = 1, kInputs = 2 };
  Resident resident = Resident::kNone;
  // Conv chains (ConvChainParams): the first convolution's output blocks per accumulator tile
  // (each tile's result stored into INP at once), and the kept result's blocks per GEMM group
  // of the second convolution (its weights loaded per group). 0 for every other operator.
  int64_t mid_oc = 0, mid_ic = 0;
};

// A scheduled operator: its arguments (the DRAM buffers, in order) and its loop IR. Conv and
// dense: [data, weight, bias, out], or [data, weight, bias, shifts, out] with per-channel
// shifts, [..., multipliers] with multipliers, then (conv with a residual) skip and skip_weight
// before out; add: [a, b, weight, out].
struct Operator {
  std::vector<te::Tensor> args;
  tir::Func func;
};

// Per operator: check_supported throws vacc::Error naming the layer and the parameter the
// accelerator cannot run; default_schedule picks the tiling a model of the accelerator expects
// to be fastest among those that fit the scratchpads (each virtual thread owns a copy of every
// tile buffer; `vthreads` is 1 or 2, and drops to 1 for a layer too small to split), throwing
// vacc::Error naming the scratchpad when not even the smallest tile fits; define builds the
// compute definition with the schedule applied, lowered to loop IR.
void check_supported(const isa::HwConfig &config, const Conv2dParams &p, const std::string &name);
AccelSchedule default_schedule(const isa::HwConfig &config, const Conv2dParams &p, int vthreads,
                               const std::string &name);
Operator define(const isa::HwConfig &config, const Conv2dParams &p, const AccelSchedule &s,
                const std::string &name = "conv2d");

void check_supported(const isa::HwConfig &config, const DenseParams &p, const std::string &name);
AccelSchedule default_schedule(const isa::HwConfig &config, const DenseParams &p, int vthreads,
                               const std::string &name);
Operator define(const isa::HwConfig &config, const DenseParams &p, const AccelSchedule &s,
                const std::string &name = "dense");

void check_supported(const isa::HwConfig &config, const AddParams &p, const std::string &name);
AccelSchedule default_schedule(const isa::HwConfig &config, const AddParams &p, int vthreads,
                               const std::string &name);
Operator define(const isa::HwConfig &config, const AddParams &p, const AccelSchedule &s,
                const std::string &name = "add");
// The values of the add's `weight` argument, [2, BO, BI].
std::vector<int64_t> add_weight(const isa::HwConfig &config, const AddParams &p);
// The values of a fused residual's `skip_weight` argument, [1, BO, BI].
std::vector<int64_t> residual_weight(const isa::HwConfig &config, const Residual &r);

void check_supported(const isa::HwConfig &config, const PoolParams &p, const std::string &name);
AccelSchedule default_schedule(const isa::HwConfig &config, const PoolParams &p, int vthreads,
                               const std::string &name);
Operator define(const isa::HwConfig &config, const PoolParams &p, const AccelSchedule &s,
                const std::string &name = "pool2d");
// The values of a pool's `weight` argument, [1, BO, BI]: the identity.
std::vector<int64_t> pool_weight(const isa::HwConfig &config);
// Whether an average pool's windows count differently (then it takes per-window multipliers),
// and the values of its `multipliers` argument, [OH, OW, B, BO].
bool pool_counts_vary(const PoolParams &p);
std::vector<int64_t> pool_multipliers(const isa::HwConfig &config, const PoolParams &p);

void check_supported(const isa::HwConfig &config, const ConvChainParams &p,
                     const std::string &name);
AccelSchedule default_schedule(const isa::HwConfig &config, const ConvChainParams &p, int vthreads,
                               const std::string &name);
Operator define(const isa::HwConfig &config, const ConvChainParams &p, const AccelSchedule &s,
                const std::string &name = "conv_chain");

// The cycles the cost model that default_schedule minimizes gives its schedule, for choices
// between forms of a graph (a conv chain against its two convolutions apart); throws as
// default_schedule does.
double modelled_cycles(const isa::HwConfig &config, const Conv2dParams &p, int vthreads,
                       const std::string &name);
double modelled_cycles(const isa::HwConfig &config, const ConvChainParams &p, int vthreads,
                       const std::string &name);

// A requantization (shift or per-channel shifts, clip bounds) of an operator with
// `out_channels` outputs; throws vacc::Error naming the layer.
void check_requant_supported(const isa::HwConfig &config, const Requant &q, int64_t out_channels,
                             const std::string &name);

}  // namespace vacc::lower
