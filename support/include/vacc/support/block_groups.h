// Grouped (and depthwise) convolutions on the blocked layout (blocked_layout.h). A convolution
// with `groups` groups over C input and O output channels runs on the GEMM core as `parts`
// independent parts: the channels, padded to the blocks (C' = round_up(C, block_in),
// O' = round_up(O, block_out)), split into `parts` equal slices of whole blocks, and output
// slice p reads input slice p only. Inside a part the weight is dense: the model's weight
// [O, C/groups, kh, kw] is expanded to [O', C'/parts, kh, kw] with zeros between its groups
// (a depthwise convolution's tiles are diagonal). The graph's packing, the accelerator's
// legality and the host-side packing of tests and benchmarks all ask these functions, so
// they agree on the parts.
#pragma once

#include <cstdint>

namespace vacc {

// Whether `parts` slices hold every group whole: each real output channel's group reads only
// input channels of its own slice.
inline bool parts_hold_groups(int64_t in_channels, int64_t out_channels, int64_t groups,
                              int64_t block_in, int64_t block_out, int64_t parts) {
  const int64_t cb = (in_channels + block_in - 1) / block_in;
  const int64_t ob = (out_channels + block_out - 1) / block_out;
  if (parts <= 0 || cb % parts != 0 || ob % parts != 0) return false;
  const int64_t part_in = cb / parts * block_in, part_out = ob / parts * block_out;
  const int64_t cg = in_channels / groups, og = out_channels / groups;
  for (int64_t g = 0; g < groups; ++g) {
    // The group's outputs [g*og, (g+1)*og) lie in slices first..last; its inputs in one slice.
    const int64_t first = g * og / part_out, last = ((g + 1) * og - 1) / part_out;
    const int64_t lo = g * cg, hi = (g + 1) * cg - 1;
    if (first != last || lo / part_in != first || hi / part_in != first) return false;
  }
  return true;
}

// The most parts (so the fewest weight tiles per output block) that hold every group whole;
// 1 (a dense convolution with zero weights between the groups) always does.
inline int64_t block_groups(int64_t in_channels, int64_t out_channels, int64_t groups,
                            int64_t block_in, int64_t block_out) {
  if (groups <= 1 || in_channels % groups != 0 || out_channels % groups != 0) return 1;
  const int64_t cb = (in_channels + block_in - 1) / block_in;
  for (int64_t parts = cb; parts > 1; --parts)
    if (parts_hold_groups(in_channels, out_channels, groups, block_in, block_out, parts))
      return parts;
  return 1;
}

// Where the expanded weight's element (output channel o, input channel j of o's slice, which
// is `part_in` = C'/parts channels wide) comes from: the input channel's index inside o's
// group in the model's weight [O, C/groups, ...], or -1 where the expanded weight is zero.
inline int64_t grouped_weight_channel(int64_t o, int64_t j, int64_t in_channels,
                                      int64_t out_channels, int64_t groups, int64_t part_in,
                                      int64_t part_out) {
  const int64_t i = o / part_out * part_in + j;  // the input channel in the whole tensor
  const int64_t cg = in_channels / groups, g = o / (out_channels / groups);
  if (i < g * cg || i >= (g + 1) * cg) return -1;
  return i - g * cg;
}

}  // namespace vacc
