// Accelerator operators: compute definitions in the blocked layouts the accelerator reads,
// with the schedules that map them onto it. Layouts (B = batch, BI = block_in, BO = block_out
// of the config; every channel count a multiple of its block):
//   conv2d data   [N/B, C/BI, H, W, B, BI]        int(inp_bits)
//          kernel [O/BO, C/BI, KH, KW, BO, BI]    int(wgt_bits)
//          bias   [N/B, O/BO, B, BO]              int(acc_bits)
//          out    [N/B, O/BO, OH, OW, B, BO]      int(inp_bits)
//   dense  data [N/B, C/BI, B, BI], weight [O/BO, C/BI, BO, BI], bias [N/B, O/BO, B, BO],
//          out [N/B, O/BO, B, BO]
// out = clip((acc + bias) >> shift, lo, hi) narrowed, lo = relu ? 0 : -2^(bits-1) and
// hi = 2^(bits-1)-1 unless Requant gives its own bounds. With per-channel shifts the operator
// takes a fifth argument before out, shifts [N/B, O/BO, B, BO] int(acc_bits) (the bias
// layout), and the ALU shifts by it as a vector operand.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/te/tensor.h"
#include "vacc/tir/func.h"

namespace vacc::compiler {

struct Requant {
  Requant() = default;
  Requant(int shift_, bool relu_) : shift(shift_), relu(relu_) {}  // {shift, relu} as before

  int shift = 8;
  bool relu = true;
  // One shift per output channel (size = out channels); empty = `shift` for every channel.
  std::vector<int64_t> channel_shifts;
  // Clip bounds; unset = the defaults above. They must fit the ALU's 16-bit immediate.
  std::optional<int64_t> clip_min, clip_max;

  bool per_channel() const { return !channel_shifts.empty(); }
  int64_t lo(int bits) const {
    return clip_min ? *clip_min : relu ? 0 : -(int64_t{1} << (bits - 1));
  }
  int64_t hi(int bits) const { return clip_max ? *clip_max : (int64_t{1} << (bits - 1)) - 1; }
};

struct Conv2dParams {
  int64_t batch = 1, in_channels = 16, out_channels = 16, height = 8, width = 8;
  int64_t kernel_h = 3, kernel_w = 3, stride_h = 1, stride_w = 1, pad_h = 1, pad_w = 1;
  Requant requant;
  int64_t out_height() const { return (height + 2 * pad_h - kernel_h) / stride_h + 1; }
  int64_t out_width() const { return (width + 2 * pad_w - kernel_w) / stride_w + 1; }
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
};

struct DenseParams {
  int64_t batch = 1, in_features = 32, out_features = 32;
  Requant requant;
};

// A lowered operator: params are [data, weight, bias, out], or [data, weight, bias, shifts, out]
// with per-channel shifts.
struct Operator {
  std::vector<te::Tensor> args;
  tir::Func func;
};

Operator conv2d_accel(const isa::HwConfig &config, const Conv2dParams &p, const AccelSchedule &s,
                      const std::string &name = "conv2d");
Operator dense_accel(const isa::HwConfig &config, const DenseParams &p, const AccelSchedule &s,
                     const std::string &name = "dense");

}  // namespace vacc::compiler
