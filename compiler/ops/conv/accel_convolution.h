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

// A residual add fused after a requantization (Conv2dParams::residual): the skip tile through
// the GEMM core with an identity weight (residual_weight()), then the add's ALU stages on the
// clipped int8-valued result.
struct ResidualStages {
  te::Tensor skip, skip_weight;  // the arguments: [N/B, O/BO, OH, OW, B, BO], [1, BO, BI]
  te::Tensor skip_sum;           // the skip in the accumulators
  std::vector<te::Tensor> acc;   // the add's ALU stages
  te::Tensor out;                // the narrowed result
};

// `stages`: the requantization's stages of an output of `shape` [N/B, O/BO, OH, OW, B, BO];
// its narrowing is popped (the add narrows).
ResidualStages residual_stages(const isa::HwConfig &c, const Residual &r,
                               std::vector<te::Tensor> *stages, const std::vector<int64_t> &shape);

// Schedules them for the output stage `so`: the requantization's last stage (`requant_last`)
// and the add's in ACC at `tile`, the skip through the GEMM core at `tile`, its weight loaded
// at `weight_at`.
void schedule_residual(schedule::Schedule &s, const ResidualStages &r,
                       const te::Tensor &requant_last, schedule::Stage &so, const te::IterVar &tile,
                       const te::IterVar &weight_at);

}  // namespace vacc::lower
