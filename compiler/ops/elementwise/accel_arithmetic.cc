#include "ops/elementwise/accel_arithmetic.h"

#include <functional>

#include "lower/ops/clip.h"
#include "vacc/isa/encoding.h"
#include "vacc/support/error.h"
#include "vacc/tir/ops.h"

namespace vacc::lower {

void check_add_arithmetic(const isa::HwConfig &c, int lshift_a, int lshift_b, int rshift,
                          int64_t lo, int64_t hi, const std::string &name) {
  for (auto [what, v] : {std::pair{"lshift_a", lshift_a}, std::pair{"lshift_b", lshift_b},
                         std::pair{"rshift", rshift}})
    if (v < 0 || v >= c.acc_bits)
      fail("{}: {} = {} must lie in [0, {})", name, what, v, c.acc_bits);
  if (rshift >= isa::kImmBits)
    fail("{}: rshift = {}: the rounding constant 2^{} does not fit the ALU's {}-bit immediate",
         name, rshift, rshift - 1, isa::kImmBits);
  const int64_t imm = int64_t{1} << (isa::kImmBits - 1);
  for (auto [what, v] : {std::pair{"clip_min", lo}, std::pair{"clip_max", hi}})
    if (v < -imm || v >= imm)
      fail("{}: {} = {} does not fit the ALU's {}-bit immediate", name, what, v, isa::kImmBits);
  if (lo > hi) fail("{}: clip_min = {} is above clip_max = {}", name, lo, hi);
}

AddStages add_stages(const te::Tensor &a, int a_rest, const te::Tensor &b, int b_rest, int rshift,
                     int64_t lo, int64_t hi, const isa::HwConfig &c) {
  const int out_bits = c.out_bits();
  using tir::Expr;
  const auto &shape = a->shape();
  std::vector<std::string> names;
  for (const auto &ax : a->axes) names.push_back(ax->var->name);
  const tir::DataType at = a->dtype();
  auto idx = [](const std::vector<tir::Var> &v) { return std::vector<Expr>(v.begin(), v.end()); };
  auto k = [&](int64_t v) { return tir::make_const(at, v); };
  AddStages r;
  auto stage = [&](const std::string &name, const te::Tensor &prev,
                   const std::function<Expr(Expr)> &f) {
    r.acc.push_back(te::compute(
        name, shape, [&](const auto &v) { return f((*prev)(idx(v))); }, names));
    return r.acc.back();
  };
  // A left shift is an ALU shr by a negative immediate.
  te::Tensor b_last = b, a_last = a;
  if (b_rest > 0) b_last = stage("shl_b", b, [&](Expr x) { return x >> k(-b_rest); });
  if (a_rest > 0) a_last = stage("shl_a", a, [&](Expr x) { return x >> k(-a_rest); });
  r.acc.push_back(te::compute(
      "sum", shape, [&](const auto &v) { return (*a_last)(idx(v)) + (*b_last)(idx(v)); }, names));
  te::Tensor last = r.acc.back();
  if (rshift > 0) {
    last = stage("round", last, [&](Expr x) { return x + k(int64_t{1} << (rshift - 1)); });
    last = stage("shift", last, [&](Expr x) { return x >> k(rshift); });
  }
  for (const ClipStep &step : clip_steps(c, lo, hi, at)) last = stage(step.name, last, step.value);
  r.out = te::compute(
      "out", shape,
      [&](const auto &v) { return tir::cast(tir::DataType::int_(out_bits), (*last)(idx(v))); },
      names);
  return r;
}

void schedule_through_gemm(schedule::Schedule &s, const te::Tensor &sum, const te::Tensor &in_l,
                           schedule::Stage &so, const te::IterVar &at) {
  auto &st = s[sum];
  st.set_scope(tir::Scope::kAcc);
  st.compute_at(so, at);
  auto sx = st.axis();
  auto sr = st.reduce_axis();
  // The unit reduction axis outside the tile keeps the reset out of the GEMM nest.
  st.reorder({sx[0], sr[0], sx[1], sx[2], sx[3], sx[4], sx[5], sr[1]});
  st.tensorize(sx[4], "gemm");
  s[in_l].compute_at(so, at);
  s[in_l].pragma(s[in_l].axis()[0], "dma_copy");
}

}  // namespace vacc::lower
