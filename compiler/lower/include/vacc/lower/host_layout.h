// Host-side layout conversion for accelerator operators, on plain vectors for benches and
// tests: plain NCHW / OIHW tensors to the blocked layouts of compiler/ops.h (channels
// zero-padded to the config's blocks) and back, by the graph's packers
// (vacc/graph/blocked_layout.h, the ones compiled models use),
// and the im2col folding that lets a conv with few input channels (ResNet-18's C1, 3
// channels) use the GEMM core: each output pixel's kh x kw x C input window becomes its
// channels, so the accelerator runs a 1x1 conv whose reduction covers the whole window.
#pragma once

#include <cstdint>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/lower/operators.h"

namespace vacc::lower {

// A plain conv layer: data [N, C, H, W], weight [O, C, KH, KW], bias [O].
inline int64_t round_up(int64_t v, int64_t m) {
  return (v + m - 1) / m * m;
}

// The blocked conv the accelerator runs for `p` (channels rounded up to the blocks).
Conv2dParams blocked_conv(const isa::HwConfig &c, const Conv2dParams &p);
// The folded conv: 1x1, stride 1, no padding, over the output grid, with
// round_up(C*KH*KW, block_in) input channels.
Conv2dParams folded_conv(const isa::HwConfig &c, const Conv2dParams &p);
// Folding pays when the input channels fill less than half of a block.
bool should_fold(const isa::HwConfig &c, const Conv2dParams &p);

// data [N, C, H, W] -> [N/B, C'/BI, H, W, B, BI] with C' = round_up(C, BI).
std::vector<int64_t> pack_data(const isa::HwConfig &c, int64_t n, int64_t ch, int64_t h, int64_t w,
                               const std::vector<int64_t> &data);
// [N/B, O'/BO, H, W, B, BO] -> [N, O, H, W] (the padded channels dropped).
std::vector<int64_t> unpack_output(const isa::HwConfig &c, int64_t n, int64_t o, int64_t h,
                                   int64_t w, const std::vector<int64_t> &out);
// weight [O, C, KH, KW] -> [O'/BO, C'/BI, KH, KW, BO, BI].
std::vector<int64_t> pack_weight(const isa::HwConfig &c, int64_t o, int64_t ch, int64_t kh,
                                 int64_t kw, const std::vector<int64_t> &weight);
// weight [O, C/groups, KH, KW] of a grouped (or depthwise) convolution -> the blocked kernel of
// its slices of whole channel blocks, [O'/BO, C'/BI/G, KH, KW, BO, BI] with zeros between the
// groups, G = block_groups(C, O, groups, ...) (Conv2dParams::groups, support/block_groups.h).
std::vector<int64_t> pack_grouped_weight(const isa::HwConfig &c, int64_t o, int64_t ch,
                                         int64_t groups, int64_t kh, int64_t kw,
                                         const std::vector<int64_t> &weight);
// bias [O] -> [N/B, O'/BO, B, BO] (the same bias for every batch row). Also the layout of the
// per-channel `shifts` argument (compiler::Requant::channel_shifts).
std::vector<int64_t> pack_bias(const isa::HwConfig &c, int64_t n, int64_t o,
                               const std::vector<int64_t> &bias);

// im2col: data [N, C, H, W] of conv `p` -> the blocked input of folded_conv(p); channel
// (c*KH + kh)*KW + kw of output pixel (oh, ow) holds data[c][oh*sh + kh - ph][ow*sw + kw - pw]
// (zero outside the image).
std::vector<int64_t> fold_data(const isa::HwConfig &c, const Conv2dParams &p,
                               const std::vector<int64_t> &data);
// weight [O, C, KH, KW] -> the blocked weight of folded_conv(p).
std::vector<int64_t> fold_weight(const isa::HwConfig &c, const Conv2dParams &p,
                                 const std::vector<int64_t> &weight);

}  // namespace vacc::lower
