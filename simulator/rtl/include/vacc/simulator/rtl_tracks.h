// The timeline's tracks beside the engines (isa::Engine 0..2): one per unit of the compute
// engine. Shared by the simulator (rtl_sim.h) and the per-config models (rtl_core.h), which do
// not see isa/.
#pragma once

namespace vacc::sim {

inline constexpr int kGemmUnitTrack = 3;
inline constexpr int kAluUnitTrack = 4;
inline constexpr int kNumTracks = 5;

}  // namespace vacc::sim
