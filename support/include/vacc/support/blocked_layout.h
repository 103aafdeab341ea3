// The accelerator's blocked layout (NCHWnc), shared by the graph's pack/unpack kernels and
// the accelerator operators' host-side packing: plain [N, C, S...] with the spatial
// dimensions flattened to `inner` becomes [ceil(N/bn), ceil(C/bc), S..., bn, bc]. Weights
// [O, I, kh, kw] use the same form with O as "N" and I as "C".
#pragma once

#include <cstdint>

namespace vacc {

// Offset in the blocked form of plain element (n, c, s); `cb` = ceil(C / bc).
inline int64_t blocked_offset(int64_t n, int64_t c, int64_t s, int64_t inner, int64_t bn,
                              int64_t bc, int64_t cb) {
  return (((n / bn) * cb + c / bc) * inner + s) * bn * bc + (n % bn) * bc + c % bc;
}

}  // namespace vacc
