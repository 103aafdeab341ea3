// Whether the GEMM core of a config packs two int8 products into one DSP48 multiplier
// (gemm.dsp_packing; hw/rtl/vacc_mul2_packed.sv). `on` and `off` are taken as they are;
// `auto` packs when the unpacked design's DSP estimate exceeds 90% of the DSP slices of the
// config's fpga.part (the margin that placement and routing want), and does not pack for a
// part vacc does not know. The decision is written into vacc_pkg.sv (GemmDspPacking), so
// everything keyed by the package text (synthesis and RTL model caches) follows it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vacc/hw/parts.h"
#include "vacc/isa/config.h"

namespace vacc::hw {

struct DspPackingPlan {
  bool packed = false;
  // DSP48 slices the design needs, estimated: one per multiplier of the GEMM core (one per
  // two products when packed), and those of the ALU's AccBits x AccBits multipliers.
  int64_t dsps_unpacked = 0;
  int64_t dsps_packed = 0;
  std::optional<FpgaPart> part;  // fpga.part, when vacc knows it
  std::string reason;            // one line: why packed or not
};

// The share of a part's DSP slices that `auto` lets the unpacked design use.
inline constexpr double kAutoDspBudget = 0.9;

DspPackingPlan plan_dsp_packing(const isa::HwConfig &config);

}  // namespace vacc::hw
