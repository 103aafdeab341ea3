// vacc.QAdd's arithmetic on ACC tiles, shared by the add operator and the residual add fused
// into a convolution's epilogue: out = clip(((a << la) + (b << lb) + round) >> rshift, lo, hi).
// int8 operands reach the accumulators through the GEMM core with a scaled identity weight
// (2^k with k = min(lshift, 6), the largest power of two an int8 weight holds); the rest of a
// left shift is an ALU shr by a negative immediate.
#pragma once

#include <string>
#include <vector>

#include "vacc/isa/config.h"
#include "vacc/schedule/schedule.h"
#include "vacc/te/tensor.h"

namespace vacc::lower {

constexpr int kMaxWeightShift = 6;  // 2^6 = 64 is the largest power of two in int8

inline int weight_shift(int lshift) {
  return lshift < kMaxWeightShift ? lshift : kMaxWeightShift;
}

// Throws vacc::Error naming the layer when the shifts or clip bounds do not fit the ALU.
void check_add_arithmetic(const isa::HwConfig &c, int lshift_a, int lshift_b, int rshift,
                          int64_t lo, int64_t hi, const std::string &name);

// The ALU stages once both operands are in ACC, `a` and `b` scaled by the GEMM core's weight
// and still to be shifted left by a_rest and b_rest: those shifts, the sum, rounding, shift
// and clip, in the order they run (`acc`, all in the ACC scope), and the narrowed
// int(inp_bits) output.
struct AddStages {
  std::vector<te::Tensor> acc;
  te::Tensor out;
};
AddStages add_stages(const te::Tensor &a, int a_rest, const te::Tensor &b, int b_rest, int rshift,
                     int64_t lo, int64_t hi, const isa::HwConfig &config);

// Schedules `sum` (an int8 tile through the GEMM core: a unit reduction and the block_in
// lanes, in ACC) and its INP copy `in_l` at `at` of the output stage `so`.
void schedule_through_gemm(schedule::Schedule &s, const te::Tensor &sum, const te::Tensor &in_l,
                           schedule::Stage &so, const te::IterVar &at);

}  // namespace vacc::lower
