// The requantization every GEMM operator ends with, as ALU stages in the ACC scope: bias add,
// shift (by an immediate, or by a per-channel `shifts` tensor as an ACC vector operand; with
// extensions.alu_shr_clip a per-channel shift and the clip are one stage, fused_shr_clip), with
// multipliers (Requant::multiplied) the pre-clip, the multiply by a `multipliers` vector
// operand, the post shift and the zero point, then clip low, clip high and the narrowed
// output.
#pragma once

#include <functional>
#include <vector>

#include "vacc/lower/operators.h"
#include "vacc/tir/node.h"

namespace vacc::lower {

using ChannelIndex = std::function<tir::Expr(const std::vector<tir::Var> &)>;

// `bias(v)`, `shift(v)` and `multiplier(v)` read the per-channel operands at output index v.
// Returns the stages, the narrowed output (int(inp_bits)) last: stage 0 reads the bias, stage 1
// the shifts, stage kMultiplyStage the multipliers.
std::vector<te::Tensor> requantize(const te::Tensor &acc, const Requant &q,
                                   const isa::HwConfig &config,
                                   const ChannelIndex &bias, const ChannelIndex &shift,
                                   const ChannelIndex &multiplier);
inline constexpr size_t kMultiplyStage = 4;

// Whether the per-channel shift and the final clip are one SHR_CLIP (extensions.alu_shr_clip):
// no multiplier between them, and both bounds fit the immediate's 8-bit halves.
bool fused_shr_clip(const Requant &q, const isa::HwConfig &config);

// The per-channel ACC vectors one block of output channels needs: bias, and shifts and
// multipliers where the requantization has them.
int64_t channel_vectors(const Requant &q);

// Cycles the ALU spends per output tile on the reset and the requantization (hw/README.md: a
// micro-op with a vector operand every second cycle, every cycle with an immediate or a held
// operand), for the default schedules' cost models.
double alu_cycles_per_tile(const Requant &q, const isa::HwConfig &config);

}  // namespace vacc::lower
