// A convolution's compute on the accelerator, shared by the conv operator (accel.cc) and the
// conv chain (accel_chain.cc): the padded input (to be inlined: the DMA pads) and the GEMM
// reduction into the accumulators, in the layouts of operators.h, and the reduction's schedule
// (input-channel blocks outermost, the GEMM tile innermost).
#pragma once

#include <string>

#include "vacc/isa/config.h"
#include "vacc/lower/operators.h"
#include "vacc/schedule/schedule.h"

namespace vacc::lower {

struct Convolution {
  te::Tensor pad;   // the zero-padded input
  te::Tensor conv;  // the accumulators, [N/B, O/BO, OH, OW, B, BO] int(acc_bits)
};

// `data` [N/B, C/BI, H, W, B, BI] and `kernel` [O/BO, C/BI/G, KH, KW, BO, BI] of `p`; the
// stages are named `prefix` + "pad" and `prefix` + "conv".
Convolution convolution(const isa::HwConfig &c, const Conv2dParams &p, const te::Tensor &data,
                        const te::Tensor &kernel, const std::string &prefix = "");

// Schedules `conv` as computed at `parent`'s `at`: its input-channel blocks split by `tile_ic`
// and outermost, the GEMM intrinsic on the batch axis. Returns the outer input-block loop, where
// a tile's input and weight loads go.
te::IterVar schedule_convolution(schedule::Schedule &s, const te::Tensor &conv,
                                 schedule::Stage &parent, const te::IterVar &at, int64_t tile_ic);

}  // namespace vacc::lower
