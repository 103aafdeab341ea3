// The accelerator's blocked layout (NCHWnc) on tensors, the one set of packers: the graph's
// vacc.PackNCHWnc / vacc.UnpackNCHWnc kernels, the pack_layout pass and the accelerator
// operators' host-side packing (lower/host_layout.h, for benches and tests) all use these.
// Plain [N, C, S...] becomes [ceil(N/bn), ceil(C/bc), S..., bn, bc], zero-filled where N or C
// is not a multiple of the block; weights [O, I, kh, kw] use the same form with O as "N" and I
// as "C". With a window (kernel_shape, strides, pads, dilations as a convolution's), the pack
// first unfolds every output position's window into channels (im2col): [N, C, H, W] becomes
// [N, C*kh*kw, OH, OW], channel (c*kh + y)*kw + x, zero where the window reads padding. With
// replicate_pads [top, left, bottom, right] the unfolded grid grows by that many copies of its
// edge rows and columns (output row r holds the windows of row clamp(r - top, 0, OH - 1)): a
// max pool fused after the convolution (graph/passes/fuse_pools.h) then needs no padding.
#pragma once

#include <cstdint>
#include <vector>

#include "vacc/graph/attribute.h"
#include "vacc/graph/tensor.h"

namespace vacc::graph {

Shape blocked_shape(const Shape &plain, int64_t block_n, int64_t block_c);
// The plain NC... shape whose blocked form is `blocked` (padded channel/batch counts).
Shape unblocked_shape(const Shape &blocked);
Tensor block_tensor(const Tensor &plain, int64_t block_n, int64_t block_c);
// The blocked tensor cropped back to `plain_shape` (the padded rows and channels dropped).
Tensor unblock_tensor(const Tensor &blocked, const Shape &plain_shape);

// A windowed pack's unfolded (im2col) [N, C*kh*kw, OH, OW] form of x (x itself without a
// kernel_shape attribute), and the unfolding.
Shape unfolded_shape(const Shape &x, const Attributes &attrs);
// A windowed pack's replicate_pads [top, left, bottom, right] ({0, 0, 0, 0} without).
std::vector<int64_t> replicate_pads(const Attributes &attrs);
Tensor unfold_windows(const Tensor &x, const Attributes &attrs);

// A grouped convolution's weight [O, C/group, kh, kw] expanded to the slices of whole channel
// blocks the accelerator runs (support/block_groups.h): [O, C'/parts, kh, kw], zero between the
// groups, with `parts` (the slices, the accelerator's group count) stored in *parts. An
// ungrouped weight comes back unchanged with *parts = 1.
Tensor slice_weight_groups(const Tensor &w, int64_t group, int64_t block_in, int64_t block_out,
                           int64_t *parts);

}  // namespace vacc::graph
