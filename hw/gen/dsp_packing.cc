// gemm.dsp_packing resolved for one config (see dsp_packing.h).
#include "vacc/hw/dsp_packing.h"

#include <fmt/format.h>

namespace vacc::hw {

namespace {

// DSP48 slices of one AccBits x AccBits multiplier truncated to AccBits (vacc_alu's MUL):
// a 25 x 18 slice covers 16-bit operands; 32-bit ones take three (the partial product of the
// two upper halves lands above bit 32 and is dropped).
int64_t dsps_per_alu_multiplier(int acc_bits) {
  return acc_bits <= 18 ? 1 : 3;
}

}  // namespace

DspPackingPlan plan_dsp_packing(const isa::HwConfig &c) {
  DspPackingPlan plan;
  const int64_t macs = c.peak_macs_per_cycle();
  const int64_t alu = int64_t{c.batch} * c.block_out * dsps_per_alu_multiplier(c.acc_bits);
  plan.dsps_unpacked = macs + alu;
  plan.dsps_packed = (macs + 1) / 2 + alu;
  plan.part = find_part(c.fpga_part);
  const bool can_pack = c.block_out >= 2 || c.batch >= 2;
  switch (c.dsp_packing) {
    case isa::DspPacking::kOn:
      plan.packed = true;
      plan.reason = "gemm.dsp_packing: on";
      break;
    case isa::DspPacking::kOff:
      plan.packed = false;
      plan.reason = "gemm.dsp_packing: off";
      break;
    case isa::DspPacking::kAuto:
      if (!plan.part) {
        plan.reason =
            fmt::format("auto: fpga.part '{}' is not a part vacc knows, so unpacked", c.fpga_part);
      } else if (!can_pack) {
        plan.reason = "auto: a 1 x n x 1 core has no two products that share an operand";
      } else {
        const double budget = kAutoDspBudget * static_cast<double>(plan.part->dsps);
        plan.packed = static_cast<double>(plan.dsps_unpacked) > budget;
        plan.reason = fmt::format(
            "auto: about {} DSPs unpacked {} {:.0f}% of {}'s {}", plan.dsps_unpacked,
            plan.packed ? ">" : "<=", 100 * kAutoDspBudget, plan.part->name, plan.part->dsps);
      }
      break;
  }
  return plan;
}

}  // namespace vacc::hw
