// The requantization every GEMM operator ends with, as ALU stages in the ACC scope: bias add,
// shift (by an immediate, or by a per-channel `shifts` tensor as an ACC vector operand), clip
// low, clip high, then the narrowed output.
#pragma once

#include <functional>
#include <vector>

#include "vacc/lower/operators.h"
#include "vacc/tir/node.h"

namespace vacc::lower {

using ChannelIndex = std::function<tir::Expr(const std::vector<tir::Var> &)>;

// `bias(v)` and `shift(v)` read the per-channel operands at output index v. Returns the stages,
// the narrowed output (int(out_bits)) last.
std::vector<te::Tensor> requantize(const te::Tensor &acc, const Requant &q, int out_bits,
                                   const ChannelIndex &bias, const ChannelIndex &shift);

// Cycles the ALU spends per output tile on the reset and the requantization (hw/README.md: a
// micro-op with a vector operand every second cycle, with an immediate every cycle), for the
// default schedules' cost models.
double alu_cycles_per_tile(const Requant &q);

}  // namespace vacc::lower
